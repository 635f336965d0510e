package authority

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Migrate runs one migration command on the store spec names (pling
// authority migrate): "status" lists every migration, applied or
// pending; "up" applies the pending ones; "down" rolls back the newest
// applied one. Every instance applies pending migrations when it starts,
// so "up" is for a deploy that migrates first, "down" for going back a
// release (stop the instances of the newer release first).
func Migrate(ctx context.Context, spec StoreSpec, verb string, w io.Writer) error {
	d, target, err := spec.Parse()
	if err != nil {
		return fmt.Errorf("authority: %w", err)
	}
	var db *sql.DB
	var dialect goose.Dialect
	var sub fs.FS
	var opts []goose.ProviderOption
	if d == PostgreSQL {
		cfg, err := pgx.ParseConfig(target)
		if err != nil {
			return fmt.Errorf("authority: postgres: %w", err) // pgx redacts the password
		}
		if cfg.ConnectTimeout == 0 {
			cfg.ConnectTimeout = pgConnectTimeout
		}
		db = stdlib.OpenDB(*cfg)
		dialect = goose.DialectPostgres
		if sub, err = fs.Sub(postgresMigrations, "migrations/postgres"); err != nil {
			return err
		}
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 60))
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	} else {
		if db, err = sql.Open("sqlite", "file:"+target+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"); err != nil {
			return err
		}
		db.SetMaxOpenConns(1)
		dialect = goose.DialectSQLite3
		if sub, err = fs.Sub(sqliteMigrations, "migrations/sqlite"); err != nil {
			return err
		}
	}
	defer db.Close()
	p, err := goose.NewProvider(dialect, db, sub, opts...)
	if err != nil {
		return fmt.Errorf("authority: migrations: %w", err)
	}
	switch verb {
	case "status":
		st, err := p.Status(ctx)
		if err != nil {
			return fmt.Errorf("authority: migrations: %w", err)
		}
		for _, m := range st {
			at := ""
			if m.State == goose.StateApplied {
				at = " " + m.AppliedAt.UTC().Format("2006-01-02T15:04:05Z")
			}
			fmt.Fprintf(w, "%05d %-8s %s%s\n", m.Source.Version, m.State, baseName(m.Source.Path), at)
		}
	case "up":
		res, err := p.Up(ctx)
		if err != nil {
			return fmt.Errorf("authority: migrations: %w", err)
		}
		for _, r := range res {
			fmt.Fprintf(w, "applied %05d %s\n", r.Source.Version, baseName(r.Source.Path))
		}
		if len(res) == 0 {
			fmt.Fprintln(w, "nothing to apply")
		}
	case "down":
		r, err := p.Down(ctx)
		if err != nil {
			return fmt.Errorf("authority: migrations: %w", err)
		}
		fmt.Fprintf(w, "rolled back %05d %s\n", r.Source.Version, baseName(r.Source.Path))
	default:
		return fmt.Errorf("authority: migrate %q: want status, up or down", verb)
	}
	return nil
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
