package authority

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
)

// queryer is where a store statement runs: the store's pool (sqlStore.db)
// or the one transaction a method holds (sqlStore.begin). A helper that
// runs statements takes one queryer and nothing else to run them on, so
// the caller decides, once, whether they are in its transaction.
//
// On SQLite the pool has one connection, which an open transaction holds:
// a statement on the pool from inside the transaction would wait for that
// connection for ever. The pool knows the transactions open on the
// context it is given (begin marks it) and refuses such a statement at
// once with errOutsideTx instead.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) row
}

// row is the one row QueryRowContext reads.
type row interface{ Scan(dest ...any) error }

// errOutsideTx is a statement sent to the pool from inside an open
// transaction of the same call: a bug, refused before it can wait.
var errOutsideTx = errors.New("authority: a statement on the store's pool inside an open transaction (use the transaction)")

// pool is the store's *sql.DB as a queryer that refuses statements from
// inside an open transaction.
type pool struct{ db *sql.DB }

type txKey struct{}

// inTx returns errOutsideTx when ctx carries a transaction still open.
func inTx(ctx context.Context) error {
	if t, ok := ctx.Value(txKey{}).(*tx); ok && t.open.Load() {
		return errOutsideTx
	}
	return nil
}

func (p pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := inTx(ctx); err != nil {
		return nil, err
	}
	return p.db.ExecContext(ctx, query, args...)
}

func (p pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := inTx(ctx); err != nil {
		return nil, err
	}
	return p.db.QueryContext(ctx, query, args...)
}

func (p pool) QueryRowContext(ctx context.Context, query string, args ...any) row {
	if err := inTx(ctx); err != nil {
		return errRow{err}
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// tx is a transaction as a queryer.
type tx struct {
	*sql.Tx
	open atomic.Bool
}

func (t *tx) QueryRowContext(ctx context.Context, query string, args ...any) row {
	return t.Tx.QueryRowContext(ctx, query, args...)
}

func (t *tx) Commit() error {
	t.open.Store(false)
	return t.Tx.Commit()
}

func (t *tx) Rollback() error {
	t.open.Store(false)
	return t.Tx.Rollback()
}

// begin starts a transaction and returns it with ctx marked by it: every
// statement of the method that began it runs on the returned tx, and one
// sent to the pool with the returned context fails at once (errOutsideTx),
// as does a second begin, until the transaction ends.
func (s *sqlStore) begin(ctx context.Context) (*tx, context.Context, error) {
	if err := inTx(ctx); err != nil {
		return nil, ctx, err
	}
	stx, err := s.db.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, ctx, err
	}
	t := &tx{Tx: stx}
	t.open.Store(true)
	return t, context.WithValue(ctx, txKey{}, t), nil
}
