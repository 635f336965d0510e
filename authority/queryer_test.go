package authority

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestStatementOutsideTxFailsFast: SQLite's pool has one connection, which
// an open transaction holds. A statement sent to the pool from inside the
// transaction (a helper that forgot its queryer) is refused at once with
// errOutsideTx instead of waiting for that connection for ever; once the
// transaction ends, the same context reaches the pool again.
func TestStatementOutsideTxFailsFast(t *testing.T) {
	opened, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	s := opened.(*sqlStore)
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"exec", func(ctx context.Context) error { _, err := s.db.ExecContext(ctx, `DELETE FROM requests`); return err }},
		{"query", func(ctx context.Context) error {
			rows, err := s.db.QueryContext(ctx, `SELECT 1`)
			if err == nil {
				rows.Close()
			}
			return err
		}},
		{"query row", func(ctx context.Context) error { var n int; return s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&n) }},
		{"a second transaction", func(ctx context.Context) error {
			t2, _, err := s.begin(ctx)
			if err == nil {
				t2.Rollback()
			}
			return err
		}},
		{"a store method", func(ctx context.Context) error { return s.DeleteExpiredRequests(ctx, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The bound only turns a hang into a failure; the refusal is immediate.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			tx, ctx, err := s.begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.run(ctx); !errors.Is(err, errOutsideTx) {
				t.Errorf("inside a transaction: %v, want errOutsideTx", err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM requests`); err != nil {
				t.Errorf("the transaction itself: %v", err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := tc.run(ctx); err != nil {
				t.Errorf("after the commit: %v", err)
			}
		})
	}
}
