package authority_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"
	"time"

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
			defer watchdog(t, storeTestDeadline)()
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
				authority.UseInstanceClock(st)
				t.Cleanup(func() { st.Close() })
				return st
			})
		})
	}
}

// storeTestDeadline bounds one store test. A store call that waits for
// ever (a statement outside its transaction on SQLite's one connection
// waits for that connection) would otherwise hold the run until go test's
// own timeout, minutes later.
const storeTestDeadline = 3 * time.Minute

// watchdog ends the test binary, with every goroutine's stack, when the
// test is still running after d; the returned func stops it.
func watchdog(t *testing.T, d time.Duration) (stop func()) {
	name := t.Name()
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			buf := make([]byte, 4<<20)
			buf = buf[:goruntime.Stack(buf, true)]
			fmt.Fprintf(os.Stderr, "%s: still running after %v: a store call waits for ever\n\n%s\n", name, d, buf)
			os.Exit(2)
		}
	}()
	return func() { close(done) }
}
