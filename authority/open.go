package authority

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// StoreSpec names a store, as pling authority's --store takes it:
// sqlite:PATH, or a postgres:// or postgresql:// URL. Its String and its
// slog value are the spec with any password replaced (Redacted), so a
// spec may be logged.
type StoreSpec string

// DefaultStore is the store of pling authority with no --store.
const DefaultStore StoreSpec = "sqlite:pling-authority.db"

// Parse checks the spec and returns its dialect and target (the SQLite
// path, or the PostgreSQL URL). Its errors name the spec redacted.
func (s StoreSpec) Parse() (Dialect, string, error) {
	v := string(s)
	if path, ok := strings.CutPrefix(v, "sqlite:"); ok {
		if path == "" {
			return 0, "", fmt.Errorf("store %q: sqlite: needs a path, e.g. sqlite:pling-authority.db", s.Redacted())
		}
		return SQLite, path, nil
	}
	if strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://") {
		if _, err := url.Parse(v); err != nil {
			return 0, "", fmt.Errorf("store %q: not a URL", s.Redacted())
		}
		return PostgreSQL, v, nil
	}
	return 0, "", fmt.Errorf("store %q: want sqlite:PATH or a postgres://USER@HOST/DB URL", s.Redacted())
}

// Redacted is the spec with the password of a URL (user info, or a
// password or sslpassword parameter) replaced by xxxxx; a spec that does
// not parse is hidden whole when it might hold one.
func (s StoreSpec) Redacted() string {
	v := string(s)
	if strings.HasPrefix(v, "sqlite:") {
		return v
	}
	u, err := url.Parse(v)
	if err != nil {
		if strings.Contains(v, "@") || strings.Contains(strings.ToLower(v), "password") {
			return "[unparseable, hidden]"
		}
		return v
	}
	q := u.Query()
	changed := false
	for k := range q {
		if lk := strings.ToLower(k); lk == "password" || lk == "sslpassword" {
			q.Set(k, "xxxxx")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

func (s StoreSpec) String() string       { return s.Redacted() }
func (s StoreSpec) LogValue() slog.Value { return slog.StringValue(s.Redacted()) }
func (s StoreSpec) GoString() string     { return fmt.Sprintf("authority.StoreSpec(%q)", s.Redacted()) }

// Open opens the store the spec names, creating and migrating it.
func Open(ctx context.Context, spec StoreSpec) (SQLStore, error) {
	d, target, err := spec.Parse()
	if err != nil {
		return nil, fmt.Errorf("authority: %w", err)
	}
	if d == PostgreSQL {
		return OpenPostgres(ctx, target)
	}
	return OpenSQLite(ctx, target)
}
