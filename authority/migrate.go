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
