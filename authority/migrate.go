package authority

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// migrateUp applies the migrations in sub (one dialect's directory) to
// db; the SQLite and PostgreSQL stores share it.
func migrateUp(ctx context.Context, db *sql.DB, dialect goose.Dialect, sub fs.FS, opts ...goose.ProviderOption) error {
	p, err := goose.NewProvider(dialect, db, sub, opts...)
	if err != nil {
		return fmt.Errorf("authority: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("authority: migrations: %w", err)
	}
	return nil
}

// schemaVersions are the store's newest applied migration and the newest
// this release embeds: an instance on a store migrated down below its
// own release fails its writes to the columns it expects, so its /readyz
// says so (http.go).
func (s *sqlStore) schemaVersions(ctx context.Context) (have, want int64, err error) {
	fsys, dir := sqliteMigrations, "migrations/sqlite"
	if s.dialect == PostgreSQL {
		fsys, dir = postgresMigrations, "migrations/postgres"
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		if v, err := goose.NumericComponent(e.Name()); err == nil && v > want {
			want = v
		}
	}
	err = s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&have)
	return have, want, err
}
