package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/internal/testing/hammer"
	"github.com/pling-go/pling/schema"
)

// TestReplayGuardOneSessionCannotFillIt: the anonymous session, inside the
// default budget, sends new ids until the built-in guard refuses it. That
// refusal must come from its own share, before the whole guard is full,
// and a second session must still be served (with one shared budget,
// 100,000 anonymous ids would make every session REPLAY_GUARD_UNAVAILABLE).
func TestReplayGuardOneSessionCannotFillIt(t *testing.T) {
	verifier := SessionVerifierFunc(func(context.Context, string, int64) (schema.SurfaceSession, error) {
		return schema.SurfaceSession{Scope: []string{"*"}, ExpiresAtMs: 1 << 50}, nil
	})
	e := newEnv(t, WithSessions(verifier, false))
	refusedAt := -1
	for i := range DefaultReplayCapacity {
		req := map[string]any{"protocol": schema.Protocol, "id": fmt.Sprintf("a%d", i), "method": "describe"}
		if resp, _ := e.send(req); !resp.OK {
			if resp.Error.Code != "REPLAY_GUARD_UNAVAILABLE" {
				t.Fatalf("anonymous id %d: %s, want REPLAY_GUARD_UNAVAILABLE", i, resp.Error.Code)
			}
			refusedAt = i
			break
		}
	}
	if refusedAt < 0 || refusedAt >= DefaultReplayCapacity {
		t.Errorf("the anonymous session was never refused its own share: it held all %d ids", DefaultReplayCapacity)
	}
	req := map[string]any{"protocol": schema.Protocol, "id": "b1", "method": "describe", "session": "tok_b"}
	if resp, out := e.send(req); !resp.OK {
		t.Errorf("another session after the anonymous one filled its share: %s", out)
	}
}

// The share, case by case: the numbers of the default, a session refused
// alone, and expiry making room again.
func TestMemoryReplayGuardSessionShare(t *testing.T) {
	ctx := context.Background()
	if DefaultReplaySessionCapacity*10 != DefaultReplayCapacity {
		t.Errorf("the default share %d is not a tenth of %d (RATIONALE.md)", DefaultReplaySessionCapacity, DefaultReplayCapacity)
	}
	type step struct {
		session, id string
		exp, now    int64
		want        string // "new", "replay", "session full", "full"
	}
	tests := []struct {
		name                 string
		capacity, perSession int
		steps                []step
	}{
		{"a session at its share is refused, another is not", 5, 2, []step{
			{"a", "1", 100, 0, "new"}, {"a", "2", 100, 0, "new"}, {"a", "3", 100, 0, "session full"},
			{"a", "1", 100, 0, "replay"}, // a held id is still detected
			{"b", "1", 100, 0, "new"}, {"b", "2", 100, 0, "new"}, {"b", "3", 100, 0, "session full"},
			{"c", "1", 100, 0, "new"}, {"d", "1", 100, 0, "full"}, // the whole bound still holds
		}},
		{"an expired id makes room in its session", 10, 2, []step{
			{"a", "1", 50, 0, "new"}, {"a", "2", 100, 0, "new"}, {"a", "3", 100, 10, "session full"},
			{"a", "3", 100, 50, "new"}, {"a", "1", 200, 50, "session full"}, {"a", "2", 100, 60, "replay"},
		}},
		{"a share above the capacity is the capacity", 2, 5, []step{
			{"a", "1", 100, 0, "new"}, {"a", "2", 100, 0, "new"}, {"a", "3", 100, 0, "full"},
		}},
		{"a share of zero is the capacity", 2, 0, []step{
			{"a", "1", 100, 0, "new"}, {"a", "2", 100, 0, "new"}, {"b", "3", 100, 0, "full"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewMemoryReplayGuard(tt.capacity, tt.perSession)
			var got, want []string
			for _, s := range tt.steps {
				prev, err := g.Consume(ctx, s.session, s.id, s.exp, s.now)
				r := "new"
				switch {
				case errors.Is(err, errReplaySessionFull):
					r = "session full"
				case errors.Is(err, errReplayGuardFull):
					r = "full"
				case err != nil:
					r = err.Error()
				case prev != nil:
					r = "replay"
				}
				got = append(got, fmt.Sprintf("%s/%s@%d: %s", s.session, s.id, s.now, r))
				want = append(want, fmt.Sprintf("%s/%s@%d: %s", s.session, s.id, s.now, s.want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestMemoryReplayGuardShareHammer: sessions race each other, each sending
// more ids than its share, some ids twice. Each id is consumed at most
// once, each session wins exactly its share, and the guard never holds
// more than its capacity (run it with -race).
func TestMemoryReplayGuardShareHammer(t *testing.T) {
	const sessions, perSession, idsEach, workers = 8, 300, 500, 4
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(max(4, goruntime.GOMAXPROCS(0))))
	g := NewMemoryReplayGuard(sessions*perSession-perSession/2, perSession) // the last sessions meet the total bound
	wins := make([][]atomic.Int32, sessions)
	for i := range wins {
		wins[i] = make([]atomic.Int32, idsEach)
	}
	hammer.Run(workers*sessions, func(i int) {
		w, s := i/sessions, i%sessions
		key := fmt.Sprint("s", s)
		for j := range idsEach {
			j := (j + w*7) % idsEach // workers meet on the same ids in different orders
			prev, err := g.Consume(context.Background(), key, fmt.Sprint(j), 1<<40, 0)
			if err == nil && prev == nil {
				wins[s][j].Add(1)
			}
			if n := g.Len(); n > sessions*perSession-perSession/2 {
				t.Errorf("the guard holds %d ids, over its capacity", n)
			}
		}
	})
	total := 0
	for s := range wins {
		won := 0
		for j := range wins[s] {
			switch n := wins[s][j].Load(); {
			case n > 1:
				t.Fatalf("session %d: id %d consumed %d times", s, j, n)
			case n == 1:
				won++
			}
		}
		if won > perSession {
			t.Errorf("session %d holds %d ids, over its share %d", s, won, perSession)
		}
		total += won
	}
	if want := sessions*perSession - perSession/2; total != want || g.Len() != want {
		t.Errorf("held %d ids (Len %d), want the capacity %d", total, g.Len(), want)
	}
}
