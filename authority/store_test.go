package authority_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
)

func TestStoreSpec(t *testing.T) {
	for _, c := range []struct {
		spec, dialect, target, err, redacted string
	}{
		{spec: "sqlite:pling-authority.db", dialect: "sqlite", target: "pling-authority.db", redacted: "sqlite:pling-authority.db"},
		{spec: "sqlite:/var/lib/a b.db", dialect: "sqlite", target: "/var/lib/a b.db", redacted: "sqlite:/var/lib/a b.db"},
		{spec: "postgres://pling:s3cret@db.internal:5432/auth?sslmode=require", dialect: "postgres",
			target: "postgres://pling:s3cret@db.internal:5432/auth?sslmode=require", redacted: "postgres://pling:xxxxx@db.internal:5432/auth?sslmode=require"},
		{spec: "postgresql://pling@db/auth?password=s3cret", dialect: "postgres", target: "postgresql://pling@db/auth?password=s3cret",
			redacted: "postgresql://pling@db/auth?password=xxxxx"},
		{spec: "sqlite:", err: `store "sqlite:": sqlite: needs a path`, redacted: "sqlite:"},
		{spec: "", err: `store "": want sqlite:PATH or a postgres://`},
		{spec: "pling-authority.db", err: `store "pling-authority.db": want sqlite:PATH`, redacted: "pling-authority.db"},
		{spec: "mysql://root:s3cret@db/auth", err: `store "mysql://root:xxxxx@db/auth": want sqlite:PATH`, redacted: "mysql://root:xxxxx@db/auth"},
		{spec: "postgres://u:s3cret@db:port/x", err: `store "[unparseable, hidden]": not a URL`, redacted: "[unparseable, hidden]"},
	} {
		t.Run(c.spec, func(t *testing.T) {
			s := authority.StoreSpec(c.spec)
			d, target, err := s.Parse()
			got := struct{ Dialect, Target, Err string }{Target: target}
			if err != nil {
				got.Err = err.Error()
				if !strings.HasPrefix(got.Err, c.err) {
					t.Errorf("error %q, want prefix %q", got.Err, c.err)
				}
				if strings.Contains(got.Err, "s3cret") {
					t.Errorf("the error holds the password: %q", got.Err)
				}
			} else {
				got.Dialect = d.String()
				if diff := cmp.Diff(struct{ Dialect, Target, Err string }{c.dialect, c.target, ""}, got); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}
			if c.redacted != "" && s.Redacted() != c.redacted {
				t.Errorf("Redacted() = %q, want %q", s.Redacted(), c.redacted)
			}
			var log strings.Builder
			slog.New(slog.NewTextHandler(&log, nil)).Info("open", "store", s)
			fmt.Fprintf(&log, "%v %s %#v", s, s, s)
			if strings.Contains(log.String(), "s3cret") {
				t.Errorf("logged or printed with its password: %s", log.String())
			}
		})
	}
}

// A PostgreSQL that cannot be reached, or a DSN pgx refuses: the error
// names neither the password nor the DSN whole.
func TestOpenPostgresErrorsHidePassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://pling:s3cret@127.0.0.1:1/auth?sslmode=disable&connect_timeout=2",
		"postgres://pling:s3cret@127.0.0.1:5432/auth?sslmode=bogus",
	} {
		_, err := authority.Open(context.Background(), authority.StoreSpec(dsn))
		if err == nil {
			t.Fatalf("%s opened", authority.StoreSpec(dsn))
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error holds the password: %v", err)
		}
	}
}

// The feed's cursors become visible in order: a reader following the
// cursor while revocations commit concurrently misses none (on
// PostgreSQL, identity values are taken before commit, in any order, so
// this needs the appenders serialised).
func TestRevocationFeedMissesNoneUnderConcurrentRevokes(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open()
		const n, writers = 120, 8
		for i := range n {
			id := fmt.Sprintf("d%d", i)
			collectSession(ctx, t, st, id, 1<<50)
		}
		seen := map[string]int{}
		var cursor int64
		follow := func() {
			list, next, err := st.Revocations(ctx, cursor, 0, 1000)
			if err != nil {
				t.Error(err)
				return
			}
			for _, r := range list {
				seen[r.SessionID]++
			}
			cursor = next
		}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += writers {
					if err := st.Revoke(ctx, fmt.Sprintf("sd%d", i), 3); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
			}
			follow()
		}
		follow()
		if len(seen) != n {
			t.Errorf("the follower saw %d of %d revocations", len(seen), n)
		}
		for sid, k := range seen {
			if k != 1 {
				t.Errorf("%s seen %d times", sid, k)
			}
		}
	})
}

// TestRevocationFeedSkipsExpired: the feed serves no entry whose session
// expired before the cut-off, and the cursor it returns moves past the
// expired entries it skipped (to the head when the page is not full), so
// a follower never reads them and never asks for them again; a full page
// stops at its last entry. Restored then changes the epoch. Both stores.
func TestRevocationFeedSkipsExpired(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open()
		// Sessions expiring at 1000·i: i < 5 are past the cut-off 4500.
		for i := range 8 {
			id := fmt.Sprintf("d%d", i)
			collectSession(ctx, t, st, id, int64(1000*(i+1)))
			if err := st.Revoke(ctx, "s"+id, 3); err != nil {
				t.Fatal(err)
			}
		}
		ids := func(list []authority.Revocation) []string {
			var out []string
			for _, r := range list {
				out = append(out, r.SessionID)
			}
			return out
		}
		all, head, err := st.Revocations(ctx, 0, 0, 100)
		if err != nil || len(all) != 8 {
			t.Fatalf("the whole feed: %v %v", ids(all), err)
		}
		list, next, err := st.Revocations(ctx, 0, 4500, 100)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"sd4", "sd5", "sd6", "sd7"}, ids(list)); diff != "" || next != head {
			t.Errorf("live page (-want +got):\n%s cursor %d, want the head %d", diff, next, head)
		}
		list, next, err = st.Revocations(ctx, 0, 4500, 2)
		if err != nil || len(list) != 2 || next != list[1].Cursor {
			t.Errorf("a full page: %v cursor %d %v, want its last entry's cursor", ids(list), next, err)
		}
		if list, next, err = st.Revocations(ctx, head, 0, 100); err != nil || len(list) != 0 || next != head {
			t.Errorf("after the head: %v %d %v", ids(list), next, err)
		}
		e1, err := st.Epoch(ctx)
		if err != nil || e1 == "" {
			t.Fatalf("epoch %q %v", e1, err)
		}
		if e, _ := st.Epoch(ctx); e != e1 {
			t.Errorf("the epoch changed without a restore: %q then %q", e1, e)
		}
		res, err := st.Restored(ctx, 5000, "e-restored", authority.SigningKey{Kid: "knew", PrivateKey: make([]byte, 64), CreatedMs: 5000})
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := st.Keys(ctx, 5000)
		if e, _ := st.Epoch(ctx); e != "e-restored" || len(keys) != 1 || keys[0].Kid != "knew" {
			t.Errorf("after Restored (%+v): epoch %q, keys %v", res, e, keys)
		}
	})
}

// collectSession puts the delegation id on st, approved and collected:
// its session is "s"+id, for origin, and expires at expiresMs.
func collectSession(ctx context.Context, t *testing.T, st authority.Store, id string, expiresMs int64) {
	t.Helper()
	if err := st.CreateDelegation(ctx, authority.Delegation{ID: id, UserCode: id, PollSecretDigest: []byte{1},
		Audience: origin, Scope: []string{"x"}, Agent: "a", TTLMs: 1, CreatedMs: 1, ExpiresMs: 1 << 50}); err != nil {
		t.Fatal(err)
	}
	if err := st.Decide(ctx, id, authority.StatusApproved, []string{"x"}, "alice", 2); err != nil {
		t.Fatal(err)
	}
	if err := st.Collect(ctx, id, authority.Session{ID: "s" + id, DelegationID: id, TokenDigest: []byte{2},
		Audience: origin, ExpiresMs: expiresMs}); err != nil {
		t.Fatal(err)
	}
}
