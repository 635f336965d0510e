package authority_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/internal/testing/httpcheck"
	"github.com/pling-go/pling/internal/testing/pgtest"
)

// TestMigrateCommand: pling authority migrate's status, up and down on
// both stores: every migration pending on a new store, applied after up;
// down rolls back the newest only, and up applies it again.
func TestMigrateCommand(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			spec := authority.StoreSpec("sqlite:" + filepath.Join(t.TempDir(), "m.db"))
			if name == "postgres" {
				spec = authority.StoreSpec(pgtest.DSN(t))
			}
			run := func(verb string) string {
				t.Helper()
				var out bytes.Buffer
				if err := authority.Migrate(ctx, spec, verb, &out); err != nil {
					t.Fatalf("%s: %v", verb, err)
				}
				return out.String()
			}
			status := func() (applied, pending int, last string) {
				for _, l := range strings.Split(strings.TrimSpace(run("status")), "\n") {
					f := strings.Fields(l)
					switch f[1] {
					case "applied":
						applied++
					case "pending":
						pending++
					}
					last = f[0] + " " + f[1]
				}
				return
			}
			if a, p, _ := status(); a != 0 || p == 0 {
				t.Fatalf("new store: %d applied, %d pending", a, p)
			}
			run("up")
			a, p, last := status()
			newest, _, _ := strings.Cut(last, " ")
			if p != 0 || last != newest+" applied" || newest < "00200" {
				t.Fatalf("after up: %d applied, %d pending, last %q", a, p, last)
			}
			if out := run("down"); !strings.Contains(out, "rolled back "+newest) {
				t.Fatalf("down: %q", out)
			}
			if a2, p2, last := status(); a2 != a-1 || p2 != 1 || last != newest+" pending" {
				t.Fatalf("after down: %d applied, %d pending, last %q", a2, p2, last)
			}
			run("up")
			st, err := authority.Open(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			if err := authority.Migrate(ctx, spec, "sideways", &bytes.Buffer{}); err == nil {
				t.Error("an unknown verb was taken")
			}
		})
	}
}

// TestBackupRestoreSQLite: the documented online backup of a SQLite store
// (VACUUM INTO while an instance has it open and writes) restores to a
// store that holds what was there: the session and its revocation.
func TestBackupRestoreSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, sid := revokedSession(t)(authority.OpenSQLite(ctx, filepath.Join(dir, "live.db")))
	// Online: another connection, as the sqlite3 shell would be, while
	// the instance keeps its own open.
	db := authoritytest.SQLiteFile(t, filepath.Join(dir, "live.db"))
	backup := filepath.Join(dir, "backup.db")
	if _, err := db.Exec(`VACUUM INTO ?`, backup); err != nil {
		t.Fatal(err)
	}
	db.Close()
	f.session() // the live store moves on
	restored, err := authority.OpenSQLite(ctx, backup)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	checkRestored(t, restored, sid)
}

// revokedSession takes a store as it was opened and gives a fixture on it
// that holds one session, revoked, and that session's id; the store is
// closed with the test.
func revokedSession(t *testing.T) func(st authority.Store, err error) (*fixture, string) {
	return func(st authority.Store, err error) (*fixture, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f := newFixture(t, st)
		sid, _ := f.session()
		f.call("POST", "/v1/sessions/"+sid+"/revoke", opKey, nil)
		return f, sid
	}
}

// TestBackupRestorePostgres: the documented pg_dump (custom format) and
// pg_restore into a new database give a store that holds the session and
// its revocation.
func TestBackupRestorePostgres(t *testing.T) {
	ctx := context.Background()
	srcDSN := pgtest.DSN(t)
	bin, err := pgtest.Binaries()
	if err != nil {
		t.Skip(err)
	}
	_, sid := revokedSession(t)(authority.Open(ctx, authority.StoreSpec(srcDSN)))
	dump := filepath.Join(t.TempDir(), "pling.dump")
	if out, err := exec.Command(filepath.Join(bin, "pg_dump"), "--format=custom", "--file="+dump, "--dbname="+srcDSN).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v %s", err, out)
	}
	dstDSN := pgtest.DSN(t)
	if out, err := exec.Command(filepath.Join(bin, "pg_restore"), "--no-owner", "--dbname="+dstDSN, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v %s", err, out)
	}
	restored, err := authority.Open(ctx, authority.StoreSpec(dstDSN))
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	checkRestored(t, restored, sid)
}

func checkRestored(t *testing.T, st authority.Store, sid string) {
	t.Helper()
	ctx := context.Background()
	se, err := st.Session(ctx, sid)
	if err != nil || se.RevokedMs == 0 {
		t.Fatalf("restored session: %+v %v", se, err)
	}
	revs, _, err := st.Revocations(ctx, 0, 0, 10)
	if err != nil || len(revs) != 1 || revs[0].SessionID != sid {
		t.Fatalf("restored feed: %+v %v", revs, err)
	}
	if _, err := st.Keys(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, "nope"); !errors.Is(err, authority.ErrNotFound) {
		t.Fatal(err)
	}
}

// TestReadyzSaysMigratedDown: `migrate down` under a running instance of
// the newer release leaves it failing its writes; its /readyz says so
// (503, naming both versions) until `migrate up`, on both stores.
func TestReadyzSaysMigratedDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec func(t *testing.T) authority.StoreSpec
	}{
		{"sqlite", func(t *testing.T) authority.StoreSpec {
			return authority.StoreSpec("sqlite:" + filepath.Join(t.TempDir(), "a.db"))
		}},
		{"postgres", func(t *testing.T) authority.StoreSpec { return authority.StoreSpec(pgtest.DSN(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			spec := tc.spec(t)
			st, err := authority.Open(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			srv, err := authority.NewServer(ctx, authority.Config{Store: st, Audiences: map[string][]string{origin: {"*"}}})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv.Handler())
			t.Cleanup(hs.Close)
			readyz := func() (int, string) { return httpcheck.Get(t, hs.URL+"/readyz") }
			if code, body := readyz(); code != 200 {
				t.Fatalf("readyz on a current store: %d %s", code, body)
			}
			if err := authority.Migrate(ctx, spec, "down", io.Discard); err != nil {
				t.Fatal(err)
			}
			if code, body := readyz(); code != 503 || !strings.Contains(body, "store migrated down") {
				t.Errorf("readyz after migrate down: %d %s, want 503 store migrated down", code, body)
			}
			if err := authority.Migrate(ctx, spec, "up", io.Discard); err != nil {
				t.Fatal(err)
			}
			if code, body := readyz(); code != 200 {
				t.Errorf("readyz after migrate up again: %d %s", code, body)
			}
		})
	}
}
