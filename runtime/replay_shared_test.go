package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/schema"
)

// sharedGuard is a shared replay guard under test: a memory guard that
// logs what it is asked, and can be made to fail.
type sharedGuard struct {
	mu    sync.Mutex
	g     *MemoryReplayGuard
	fail  bool
	asked []string // "consume id" and "complete id code"
}

func newSharedGuard() *sharedGuard {
	return &sharedGuard{g: NewMemoryReplayGuard(100, 0)}
}

func (s *sharedGuard) Consume(ctx context.Context, session, id string, exp, now int64) (*ReplayRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, "consume "+id)
	if s.fail {
		return nil, errors.New("store down")
	}
	return s.g.Consume(ctx, session, id, exp, now)
}

func (s *sharedGuard) Complete(ctx context.Context, session, id string, r ReplayRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, "complete "+id+" "+r.Code)
	s.g.Complete(ctx, session, id, r)
}

func (s *sharedGuard) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.asked
	s.asked = nil
	return out
}

// TestSharedReplayGuard: with WithSharedReplayGuard, invokes that can
// change something (write, destructive, undeclared) consume their id in
// the shared guard too; describe and read invokes do not ask it. What the
// shared guard refuses is answered from it, and the page's own guard
// forgets the id, so a resend asks the shared guard again.
func TestSharedReplayGuard(t *testing.T) {
	ctx := context.Background()
	sh := newSharedGuard()
	e := newEnv(t, WithSharedReplayGuard(sh))
	runs := map[string]int{}
	for _, a := range []Action{
		{ID: "order.place", Title: "Place", Risk: schema.RiskWrite},
		{ID: "order.delete", Title: "Delete", Risk: schema.RiskDestructive},
		{ID: "order.look", Title: "Look", Risk: schema.RiskRead},
		{ID: "order.default", Title: "Default risk"},
	} {
		id := a.ID
		a.Run = func(context.Context, *Call) (any, error) { runs[id]++; return true, nil }
		if _, err := e.rt.DeclareAction(a); err != nil {
			t.Fatal(err)
		}
	}
	send := func(id, method, capability string) string {
		t.Helper()
		req := map[string]any{"protocol": schema.Protocol, "id": id, "method": method}
		if capability != "" {
			req["capability"] = capability
		}
		resp, _ := e.send(req)
		if !resp.OK {
			return resp.Error.Code
		}
		return "ok"
	}

	t.Run("who asks the shared guard", func(t *testing.T) {
		tests := []struct {
			id, method, capability string
			want                   []string
		}{
			{"d1", "describe", "", nil},
			{"r1", "invoke", "order.look", nil},
			{"w1", "invoke", "order.place", []string{"consume w1", "complete w1 "}},
			{"x1", "invoke", "order.delete", []string{"consume x1", "complete x1 "}},
			{"n1", "invoke", "order.default", []string{"consume n1", "complete n1 "}},
			{"u1", "invoke", "no.such", []string{"consume u1", "complete u1 ACTION_NOT_FOUND"}},
		}
		for _, tt := range tests {
			if got := send(tt.id, tt.method, tt.capability); got != "ok" {
				t.Errorf("%s: %s, want ok", tt.id, got)
			}
			if diff := cmp.Diff(tt.want, sh.log()); diff != "" {
				t.Errorf("%s %s %s: shared guard asked (-want +got):\n%s", tt.id, tt.method, tt.capability, diff)
			}
		}
	})

	t.Run("an id the shared guard holds is a replay, and stays one", func(t *testing.T) {
		// Another tab consumed o1 and was cut off (completed: false).
		if _, err := sh.g.Consume(ctx, "anonymous", "o1", 1<<50, 0); err != nil {
			t.Fatal(err)
		}
		before := runs["order.place"]
		for range 2 {
			resp, out := e.send(map[string]any{"protocol": schema.Protocol, "id": "o1", "method": "invoke", "capability": "order.place"})
			if resp.OK || resp.Error.Code != "REPLAY_DETECTED" {
				t.Fatalf("o1: %s, want REPLAY_DETECTED", out)
			}
			prev, _ := resp.Error.Details["previous"].(map[string]any)
			if diff := cmp.Diff(map[string]any{"completed": false}, prev); diff != "" {
				t.Errorf("o1 previous (-want +got):\n%s", diff)
			}
		}
		if runs["order.place"] != before {
			t.Errorf("order.place ran %d more times, want 0", runs["order.place"]-before)
		}
		if diff := cmp.Diff([]string{"consume o1", "consume o1"}, sh.log()); diff != "" {
			t.Errorf("each resend asks the shared guard (-want +got):\n%s", diff)
		}
	})

	t.Run("a failing shared guard fails closed and consumes nothing", func(t *testing.T) {
		sh.mu.Lock()
		sh.fail = true
		sh.mu.Unlock()
		before := runs["order.place"]
		if got := send("f1", "invoke", "order.place"); got != "REPLAY_GUARD_UNAVAILABLE" {
			t.Fatalf("f1 while the store is down: %s, want REPLAY_GUARD_UNAVAILABLE", got)
		}
		if got := send("f2", "invoke", "order.look"); got != "ok" {
			t.Errorf("a read invoke while the store is down: %s, want ok", got)
		}
		sh.mu.Lock()
		sh.fail = false
		sh.mu.Unlock()
		if got := send("f1", "invoke", "order.place"); got != "ok" {
			t.Fatalf("f1 resent once the store is back: %s, want ok", got)
		}
		if got := send("f1", "invoke", "order.place"); got != "REPLAY_DETECTED" {
			t.Errorf("f1 a third time: %s, want REPLAY_DETECTED", got)
		}
		if n := runs["order.place"] - before; n != 1 {
			t.Errorf("order.place ran %d times, want 1", n)
		}
	})

	t.Run("an id is one id across methods", func(t *testing.T) {
		if got := send("m1", "describe", ""); got != "ok" {
			t.Fatalf("m1 describe: %s", got)
		}
		sh.log()
		if got := send("m1", "invoke", "order.place"); got != "REPLAY_DETECTED" {
			t.Errorf("m1 reused for a write invoke: %s, want REPLAY_DETECTED", got)
		}
		if diff := cmp.Diff([]string(nil), sh.log()); diff != "" {
			t.Errorf("the page's guard answers first (-want +got):\n%s", diff)
		}
	})
}
