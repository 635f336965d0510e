package authority

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/postgres/*.sql
var postgresMigrations embed.FS

// Dialect is the SQL database under a sqlStore.
type Dialect int

const (
	SQLite Dialect = iota
	PostgreSQL
)

func (d Dialect) String() string {
	if d == PostgreSQL {
		return "postgres"
	}
	return "sqlite"
}

// Dialect is the store's database.
func (s *sqlStore) Dialect() Dialect { return s.dialect }

// PostgreSQL connection settings: many instances share the database, each
// with a pool of its own.
const (
	pgMaxOpenConns    = 32
	pgMaxIdleConns    = 8
	pgConnMaxIdle     = 5 * time.Minute
	pgConnMaxLifetime = 30 * time.Minute
	pgConnectTimeout  = 5 * time.Second
	// No statement of the store runs longer than this (statement_timeout);
	// a transaction left idle is ended (idle_in_transaction_session_timeout).
	pgStatementTimeout = "15s"
	pgIdleInTxTimeout  = "30s"
	pgOpenTimeout      = time.Minute // connect and migrate at start
)

// OpenPostgres connects to the PostgreSQL database at dsn (a postgres://
// or postgresql:// URL, or key=value pairs, as libpq reads them) and
// applies the embedded migrations, holding a PostgreSQL advisory lock so
// that instances starting together migrate once. The queries are the
// same as SQLite's: each connection rebinds ? to $n (rebind). Errors never
// carry the DSN's password.
func OpenPostgres(ctx context.Context, dsn string) (SQLStore, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("authority: postgres: %w", err) // pgx redacts the password
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgConnectTimeout
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	for k, v := range map[string]string{"statement_timeout": pgStatementTimeout,
		"idle_in_transaction_session_timeout": pgIdleInTxTimeout, "application_name": "pling-authority"} {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = v
		}
	}
	db := sql.OpenDB(rebindConnector{stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(pgMaxOpenConns)
	db.SetMaxIdleConns(pgMaxIdleConns)
	db.SetConnMaxIdleTime(pgConnMaxIdle)
	db.SetConnMaxLifetime(pgConnMaxLifetime)
	ctx, cancel := context.WithTimeout(ctx, pgOpenTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("authority: postgres: %w", err)
	}
	sub, err := fs.Sub(postgresMigrations, "migrations/postgres")
	if err != nil {
		db.Close()
		return nil, err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 60)) // retry each second, for a minute
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := migrateUp(ctx, db, goose.DialectPostgres, sub, goose.WithSessionLocker(locker)); err != nil {
		db.Close()
		return nil, err
	}
	return &sqlStore{db: pool{db}, dialect: PostgreSQL}, nil
}

// rebindConnector makes pgx connections that rebind ? placeholders.
type rebindConnector struct{ driver.Connector }

func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, errors.New("authority: postgres: unexpected driver connection")
	}
	return rebindConn{pc}, nil
}

// rebindConn is pgx's database/sql connection (every optional interface
// promoted: transactions, pings, session reset, argument checks) with
// each query text passed through rebind.
type rebindConn struct{ *stdlib.Conn }

func (c rebindConn) Prepare(q string) (driver.Stmt, error) { return c.Conn.Prepare(rebind(q)) }
func (c rebindConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(q))
}
func (c rebindConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(q), args)
}
func (c rebindConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(q), args)
}
