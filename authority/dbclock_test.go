package authority_test

import (
	"context"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/pgtest"
)

// TestLeaseFencingDatabaseClock: on PostgreSQL a lease's time is the
// database's clock. Instance B's clock runs 10 s ahead of A's, far past
// the 2 s margin: B still cannot take A's live lease (by B's clock it
// lapsed long ago); once it lapsed by the database's clock (and the
// margin) B takes it, and a write by A's old holder after that hand-over
// is refused.
func TestLeaseFencingDatabaseClock(t *testing.T) {
	dsn := pgtest.DSN(t)
	open := func() authority.Store {
		st, err := authority.Open(context.Background(), authority.StoreSpec(dsn)) // the database's clock
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	fs, _ := instances(t, open, 2, 0, 10*time.Second)
	a, b := fs[0], fs[1]
	tok := a.tokenFor("agent-1")
	id := a.newTask(tok, "", map[string]any{})
	r := a.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": "on-a", "ttlSeconds": 1})
	if r.Status != 200 {
		t.Fatalf("A acquires: %d %s", r.Status, r.Raw)
	}
	lid := r.Body["leaseId"].(string)
	if r := b.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": "on-b", "ttlSeconds": 10}); r.Status != 423 {
		t.Fatalf("B, 10 s ahead, took a lease live by the database's clock: %d %s", r.Status, r.Raw)
	}
	if r := a.do("PUT", "/v1/tasks/"+id, tok, ifMatch(1), map[string]any{"leaseId": lid, "state": map[string]any{"by": "a"}}); r.Status != 200 {
		t.Fatalf("A's holder while its lease is live: %d %s", r.Status, r.Raw)
	}
	// Lapsed by the database's clock, and the 2 s margin passed.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := b.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": "on-b", "ttlSeconds": 10})
		if r.Status == 200 {
			break
		}
		if r.Status != 423 || time.Now().After(deadline) {
			t.Fatalf("B after the lease lapsed: %d %s", r.Status, r.Raw)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if r := a.do("PUT", "/v1/tasks/"+id, tok, ifMatch(2), map[string]any{"leaseId": lid, "state": map[string]any{"by": "a, late"}}); r.Status != 409 || code(r.Body) != "CONTINUITY_LEASE_EXPIRED" {
		t.Fatalf("A's old holder after the hand-over: %d %s", r.Status, r.Raw)
	}
}
