package authority_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// instances starts n authority servers sharing one store (open opens it
// again for each: its own handle, as another instance would), each with
// its own clock (offset from a shared base).
func instances(t *testing.T, open opener, n int, offsets ...time.Duration) ([]*taskFixture, *atomic.Int64) {
	t.Helper()
	base := new(atomic.Int64)
	base.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli())
	var out []*taskFixture
	for i := range n {
		st := open()
		var off time.Duration
		if i < len(offsets) {
			off = offsets[i]
		}
		srv, err := authority.NewServer(context.Background(), authority.Config{Store: st,
			Audiences: map[string][]string{origin: {"orders.*"}}, OperatorKeys: []string{opKey},
			Now: func() time.Time { return time.UnixMilli(base.Load()).Add(off) }})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(hs.Close)
		out = append(out, &taskFixture{t: t, url: hs.URL, srv: srv, clock: base, store: st})
	}
	return out, base
}

// TestLeaseAcrossInstances: instances sharing a store hand out one lease
// between them, whichever instance each acquirer reaches.
func TestLeaseAcrossInstances(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) { leaseAcrossInstances(t, open) })
}

func leaseAcrossInstances(t *testing.T, open opener) {
	fs, _ := instances(t, open, 3)
	tok := fs[0].tokenFor("agent-1")
	id := fs[1].newTask(tok, "", map[string]any{})
	won, held := raceForLease(t, 18, func(i int) *taskFixture { return fs[i%3] }, tok, id)
	if won != 1 || held != 17 {
		t.Fatalf("%d holders and %d refusals across 3 instances, want 1 and 17", won, held)
	}
}

// TestLeaseUnderClockSkew: instance B's clock runs 1.5s ahead of A's
// (within the 2s margin). When B sees A's lease lapsed, A still takes it
// for live, so B must not hand it on; once A's holder is refused too, B may.
func TestLeaseUnderClockSkew(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) { leaseUnderClockSkew(t, open) })
}

func leaseUnderClockSkew(t *testing.T, open opener) {
	fs, base := instances(t, open, 2, 0, 1500*time.Millisecond)
	a, b := fs[0], fs[1]
	tok := a.tokenFor("agent-1")
	id := a.newTask(tok, "", map[string]any{})
	r := a.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": "on-a", "ttlSeconds": 10})
	lid := r.Body["leaseId"].(string)
	base.Add(9000) // A: 9s into the lease, B: 10.5s (past expiresAt by its clock)
	if r := b.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": "on-b", "ttlSeconds": 10}); r.Status != 423 {
		t.Fatalf("B handed on a lease A still takes for live: %d %s", r.Status, r.Raw)
	}
	if r := a.do("PUT", "/v1/tasks/"+id, tok, ifMatch(1), map[string]any{"leaseId": lid, "state": map[string]any{"by": "a"}}); r.Status != 200 {
		t.Fatalf("A's holder refused while its lease is live: %d %s", r.Status, r.Raw)
	}
	base.Add(1500) // A: 10.5s — lapsed everywhere
	if r := a.do("PUT", "/v1/tasks/"+id, tok, ifMatch(2), map[string]any{"leaseId": lid, "state": map[string]any{}}); code(r.Body) != "CONTINUITY_LEASE_EXPIRED" {
		t.Fatalf("A's holder after expiry: %d %s", r.Status, r.Raw)
	}
	// B (12s by its clock) is now past expiresAt + margin.
	if r := b.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": "on-b", "ttlSeconds": 10}); r.Status != 200 {
		t.Fatalf("B after the margin: %d %s", r.Status, r.Raw)
	}
}

func TestContinuityExpiredToken(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		st, b := f.call("POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": []string{"orders.read"}, "ttlSeconds": 60, "agent": "agent-1"})
		if st != 201 {
			t.Fatal(b)
		}
		f.call("POST", "/v1/delegations/"+b["id"].(string)+"/approve", opKey, map[string]any{"subject": "agent-1"})
		_, tb := f.call("POST", "/v1/delegations/"+b["id"].(string)+"/token", "", map[string]any{"pollSecret": b["pollSecret"]})
		tok := tb["token"].(string)
		id := f.newTask(tok, "", map[string]any{})
		f.advance(61 * time.Second)
		if r := f.do("GET", "/v1/tasks/"+id, tok, nil, nil); r.Status != 401 || code(r.Body) != "CONTINUITY_UNAUTHORIZED" {
			t.Fatalf("expired token: %d %s", r.Status, r.Raw)
		}
		// A new session of the same person for the same origin owns the task.
		if r := f.do("GET", "/v1/tasks/"+id, f.tokenFor("agent-1"), nil, nil); r.Status != 200 {
			t.Fatalf("a new session of the owner: %d %s", r.Status, r.Raw)
		}
	})
}

func TestSweepContinuity(t *testing.T) {
	ctx := context.Background()
	st, path := authoritytest.SQLite(t)
	answer := func(any) (int, []byte) { return 201, []byte("{}\n") }
	for i, exp := range []int64{100, 200, 300} {
		idem := &authority.Idempotency{Owner: "o", Key: fmt.Sprint("k", i), Digest: []byte{1}, CreatedMs: 1, ExpiresMs: exp, Answer: answer}
		if _, err := st.CreateTask(ctx, authority.Task{ID: fmt.Sprint("t", i), Owner: "o", Revision: 1, State: []byte("{}")}, idem); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SweepContinuity(ctx, 200, 0); err != nil {
		t.Fatal(err)
	}
	db := authoritytest.SQLiteFile(t, path)
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM idempotency_keys`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d keys left after the sweep at 200 (%v), want 1", n, err)
	}
}
