package authority_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/pgtest"
)

// TestMain stops the package's throwaway PostgreSQL after the tests.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// opener opens the subtest's store: every call opens the same database
// again (a new pool, as a new instance would), closed at the subtest's end.
type opener func() authority.Store

// forEachStore runs fn on SQLite and on PostgreSQL (a fresh database of
// the throwaway cluster; skipped when PostgreSQL is not installed, failed
// when PLING_REQUIRE_POSTGRES=1). Every store test goes through it, so
// that each runs on both stores.
func forEachStore(t *testing.T, fn func(t *testing.T, open opener)) {
	t.Helper()
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			var spec authority.StoreSpec
			if name == "sqlite" {
				spec = authority.StoreSpec("sqlite:" + filepath.Join(t.TempDir(), "a.db"))
			} else {
				spec = authority.StoreSpec(pgtest.DSN(t))
			}
			fn(t, func() authority.Store {
				t.Helper()
				st, err := authority.Open(context.Background(), spec)
				if err != nil {
					t.Fatal(err)
				}
				// The tests drive a fake clock; TestLeaseFencingDatabaseClock
				// runs the database's.
				st.UseInstanceClock()
				t.Cleanup(func() { st.Close() })
				return st
			})
		})
	}
}
