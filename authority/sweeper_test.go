package authority_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// sweepRows runs one sweep and returns the rows it deleted by class
// (classes with none left out).
func sweepRows(t *testing.T, srv *authority.Server) map[string]int64 {
	t.Helper()
	res, err := srv.SweepOnce(context.Background())
	if err != nil || res.Skipped || res.Partial {
		t.Fatalf("sweep: %+v %v", res, err)
	}
	out := map[string]int64{}
	for k, n := range res.Rows {
		if n != 0 {
			out[k] = n
		}
	}
	return out
}

// TestSweeperRetention: every table has a retention, the background
// sweep deletes in batches (batch 2, more rows than that), and each class
// goes at its own time: revocations once their session can hold no live
// token, credentials and requests a day past expiry, tasks after their
// idle time.
func TestSweeperRetention(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open()
		f := newFixture(t, st, func(c *authority.Config) {
			c.Retention = authority.RetentionConfig{SweepBatch: 2, TaskIdle: 48 * time.Hour}
			c.MaxTokenTTL = 10 * time.Minute
		})
		t0 := f.clock.Load()
		var sids []string
		for range 3 {
			sid, _ := f.session() // ttlSeconds 600: expire at t0+10m
			sids = append(sids, sid)
			if code, b := f.call("POST", "/v1/sessions/"+sid+"/revoke", opKey, nil); code != 200 {
				t.Fatalf("revoke: %d %v", code, b)
			}
		}
		f.create("orders.read") // pending, expires at t0+10m
		answer := func(any) (int, []byte) { return 201, []byte("{}\n") }
		for i := range 3 {
			idem := &authority.Idempotency{Owner: "o", Key: fmt.Sprint("k", i), Digest: []byte{1}, CreatedMs: t0, ExpiresMs: t0 + 3600_000, Answer: answer}
			if _, err := st.CreateTask(ctx, authority.Task{ID: fmt.Sprint("t", i), Owner: "o", Revision: 1, State: []byte("{}"),
				CreatedMs: t0, UpdatedMs: t0}, idem); err != nil {
				t.Fatal(err)
			}
		}
		feed := func() int {
			_, b := f.call("GET", "/v1/revocations?after=0", "", nil)
			return len(b["revoked"].([]any))
		}
		if n := feed(); n != 3 {
			t.Fatalf("feed before: %d entries", n)
		}

		if diff := cmp.Diff(map[string]int64{}, sweepRows(t, f.srv)); diff != "" {
			t.Errorf("sweep at t0 deleted (-want +got):\n%s", diff)
		}
		f.advance(16 * time.Minute) // sessions expired 6 min ago: past the 5 min grace
		if diff := cmp.Diff(map[string]int64{"revocations": 3}, sweepRows(t, f.srv)); diff != "" {
			t.Errorf("sweep at t0+16m (-want +got):\n%s", diff)
		}
		if n := feed(); n != 0 {
			t.Errorf("feed after the sessions expired: %d entries, want 0", n)
		}
		if _, err := st.Session(ctx, sids[0]); err != nil {
			t.Errorf("session gone before its retention: %v", err)
		}
		f.advance(25 * time.Hour)
		want := map[string]int64{"sessions": 3, "delegations": 4, "idempotency_keys": 3, "rate_buckets": 1}
		if diff := cmp.Diff(want, sweepRows(t, f.srv)); diff != "" {
			t.Errorf("sweep a day past expiry (-want +got):\n%s", diff)
		}
		if _, err := st.Session(ctx, sids[0]); !errors.Is(err, authority.ErrNotFound) {
			t.Errorf("session after its retention: %v", err)
		}
		if _, err := st.Task(ctx, "t0"); err != nil {
			t.Errorf("task gone before its idle time: %v", err)
		}
		f.advance(24 * time.Hour)
		if diff := cmp.Diff(map[string]int64{"tasks": 3}, sweepRows(t, f.srv)); diff != "" {
			t.Errorf("sweep past the tasks' idle time (-want +got):\n%s", diff)
		}
		if _, err := st.Task(ctx, "t0"); !errors.Is(err, authority.ErrNotFound) {
			t.Errorf("task after its idle time: %v", err)
		}
	})
}

// TestSweeperOneInstanceAtATime: instances sharing a store sweep one at a
// time (the lease row); the holder keeps it, another takes it once it
// lapsed.
func TestSweeperOneInstanceAtATime(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		// The lease lasts SweepEvery + SweepTimeout: 2 s, long beside the
		// calls of a loaded machine, so the holder does not lose it between them.
		rc := authority.RetentionConfig{SweepEvery: time.Second, SweepTimeout: time.Second}
		a := newFixture(t, open(), func(c *authority.Config) { c.Retention = rc })
		b := newFixture(t, open(), func(c *authority.Config) { c.Retention = rc; c.Now = a.srvNow })
		sweep := func(f *fixture) bool {
			res, err := f.srv.SweepOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return !res.Skipped
		}
		if !sweep(a) {
			t.Fatal("the first instance did not get the lease")
		}
		if sweep(b) {
			t.Fatal("a second instance swept while the first held the lease")
		}
		if !sweep(a) {
			t.Fatal("the holder lost its own lease")
		}
		a.advance(3 * time.Second)
		time.Sleep(2500 * time.Millisecond) // PostgreSQL: the lease runs on the database's clock
		if !sweep(b) {
			t.Fatal("the lease did not pass on after it lapsed")
		}
		if sweep(a) {
			t.Fatal("the old holder swept after the lease passed on")
		}
	})
}

// srvNow is the fixture's clock as a Config.Now.
func (f *fixture) srvNow() time.Time { return time.UnixMilli(f.clock.Load()) }

// TestNoCleanupInClientWrites: client writes never sweep (the sweep used
// to run in every 256th write, inside that client's budget); expired
// records wait for the background sweeper.
func TestNoCleanupInClientWrites(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t)
	f := newFixture(t, st)
	_, tok := f.session()
	answer := func(any) (int, []byte) { return 201, []byte("{}\n") }
	idem := &authority.Idempotency{Owner: "o", Key: "old", Digest: []byte{1}, CreatedMs: 1, ExpiresMs: 2, Answer: answer}
	now := f.clock.Load()
	if _, err := st.CreateTask(ctx, authority.Task{ID: "old", Owner: "o", Revision: 1, State: []byte("{}"), CreatedMs: now, UpdatedMs: now}, idem); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if code, _ := f.call("PUT", "/v1/tasks/none", tok, map[string]any{"state": map[string]any{}}); code == 0 {
			t.Fatalf("write %d: no answer", i)
		}
	}
	_, err := st.CreateTask(ctx, authority.Task{ID: "old2", Owner: "o", Revision: 1, State: []byte("{}")}, idem)
	var rp *authority.Replayed
	if !errors.As(err, &rp) {
		t.Fatalf("the expired record was swept by client writes: %v", err)
	}
	if diff := cmp.Diff(map[string]int64{"idempotency_keys": 1}, sweepRows(t, f.srv)); diff != "" {
		t.Errorf("background sweep (-want +got):\n%s", diff)
	}
}

// TestPendingDelegationsBoundPerAudience: an audience holds at most
// MaxPendingPerAudience delegations waiting for consent; one more is 429
// RATE_LIMITED until some expire.
func TestPendingDelegationsBoundPerAudience(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f, body := pendingFixture(t, open(), 3)
		var got []int
		for range 4 {
			code, _ := f.call("POST", "/v1/delegations", "", body)
			got = append(got, code)
		}
		f.advance(11 * time.Minute)
		code, b := f.call("POST", "/v1/delegations", "", body)
		got = append(got, code)
		if diff := cmp.Diff([]int{201, 201, 201, 429, 201}, got); diff != "" {
			t.Errorf("statuses (-want +got):\n%s\n%v", diff, b)
		}
	})
}

// pendingFixture is an authority on st whose audience holds at most
// perAudience delegations waiting for consent, with creates unthrottled,
// and the body of a delegation request to that audience.
func pendingFixture(t *testing.T, st authority.Store, perAudience int64) (*fixture, map[string]any) {
	t.Helper()
	f := newFixture(t, st, func(c *authority.Config) {
		c.Retention.MaxPendingPerAudience = perAudience
		c.CreateBurst = -1
	})
	return f, map[string]any{"audience": origin, "scope": []string{"orders.read"}, "ttlSeconds": 600, "agent": "a"}
}

// openSQLite opens a store on a fresh SQLite file, closed at the test's end.
func openSQLite(t *testing.T) authority.Store {
	t.Helper()
	st, _ := authoritytest.SQLite(t)
	return st
}

// TestTaskIdleSecondsOwnerSet: a task's owner sets how long it is kept
// unwritten (idleSeconds, from a minute to a year); without it the
// server's default holds. An idle time out of bounds is refused.
func TestTaskIdleSecondsOwnerSet(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open()
		f := newTaskFixture(t, st)
		tok := f.tokenFor("agent-1")
		for _, c := range []struct {
			id   string
			idle any
			want int
		}{{"short", 60, 201}, {"default", nil, 201}, {"too-short", 10, 0}, {"too-long", 366 * 24 * 3600, 0}} {
			body := map[string]any{"taskId": c.id, "state": map[string]any{}}
			if c.idle != nil {
				body["idleSeconds"] = c.idle
			}
			r := f.do("POST", "/v1/tasks", tok, nil, body)
			if c.want == 201 && r.Status != 201 {
				t.Fatalf("create %s: %d %s", c.id, r.Status, r.Raw)
			}
			if c.want == 0 && code(r.Body) != "CONTINUITY_INVALID_STATE" {
				t.Errorf("create %s: %d %s, want CONTINUITY_INVALID_STATE", c.id, r.Status, r.Raw)
			}
		}
		f.advance(2 * time.Minute)
		if diff := cmp.Diff(map[string]int64{"tasks": 1}, sweepRows(t, f.srv)); diff != "" {
			t.Errorf("sweep two minutes on (-want +got):\n%s", diff)
		}
		if _, err := st.Task(context.Background(), "short"); !errors.Is(err, authority.ErrNotFound) {
			t.Errorf("the task idle past its own idle time: %v", err)
		}
		if _, err := st.Task(context.Background(), "default"); err != nil {
			t.Errorf("the task on the default idle time: %v", err)
		}
	})
}

// TestPendingBoundPerAddress: a few addresses cannot shut an audience.
// Each address holds at most MaxPendingPerAddress delegations waiting for
// consent, so 10 addresses asking 30 times each against an audience bound
// of 300 leave room, and an agent from a fresh address is answered 201.
// With the audience's bound alone, the 10 addresses would fill its 300
// and the fresh address would get 429 for the audience.
func TestPendingBoundPerAddress(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f, body := pendingFixture(t, open(), 300)
		created := 0
		for i := range 10 {
			c := fromAddress(fmt.Sprintf("127.0.0.%d", i+2))
			for range 30 {
				if send(t, c, nil, "POST", f.url+"/v1/delegations", "", nil, body).Status == 201 {
					created++
				}
			}
		}
		if created != 10*authority.DefaultMaxPendingPerAddress {
			t.Errorf("10 addresses created %d pending delegations, want %d each", created, authority.DefaultMaxPendingPerAddress)
		}
		if r := send(t, fromAddress("127.0.0.99"), nil, "POST", f.url+"/v1/delegations", "", nil, body); r.Status != 201 {
			t.Errorf("an agent from a fresh address: %d %v, want 201", r.Status, r.Body)
		}
	})
}
