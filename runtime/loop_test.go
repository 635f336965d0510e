package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	perr "github.com/pling-go/pling/errors"
)

func TestLoopDetection(t *testing.T) {
	e := newEnv(t, WithLoop(LoopConfig{Repeats: 3, Window: 10 * time.Second}), twoSessions())
	count := newVar(0)
	e.rt.DeclareState(count.state("page"))
	var idle, moving atomic.Int64
	mustDeclare(t, e.rt, Action{ID: "next", Title: "Next page", Params: map[string]Param{"q": {Type: "string"}}, Run: counter(&idle, nil)})
	mustDeclare(t, e.rt, Action{ID: "more", Title: "Load more", Run: func(context.Context, *Call) (any, error) {
		moving.Add(1)
		count.add(1) // paging through changing state is not a loop
		return nil, nil
	}})
	call := func(cap string, input map[string]any, tok string) string {
		t.Helper()
		req := e.invokeReq(cap, input)
		if tok != "" {
			req["session"] = tok
		}
		resp, _ := e.send(req)
		return outcome(t, resp)
	}
	for i := range 3 {
		if got := call("next", map[string]any{"q": "a"}, ""); got != "ok" {
			t.Fatalf("call %d: %s", i+1, got)
		}
	}
	_, res := e.invoke("next", map[string]any{"q": "a"})
	if res.Error == nil || res.Error.Code != string(perr.LoopDetected) {
		t.Fatalf("4th identical call = %+v, want LOOP_DETECTED", res)
	}
	if diff := cmp.Diff(map[string]any{"repeats": num("3")}, res.Error.Details); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	if idle.Load() != 3 {
		t.Errorf("handler ran %d times, want 3", idle.Load())
	}
	if got := call("next", map[string]any{"q": "b"}, ""); got != "ok" {
		t.Errorf("a different input is not the same call: %s", got)
	}
	if got := call("next", map[string]any{"q": "a"}, "tok_a"); got != "ok" {
		t.Errorf("another session is not the same call: %s", got)
	}
	for i := range 6 {
		if got := call("more", nil, ""); got != "ok" {
			t.Fatalf("state-changing call %d: %s", i+1, got)
		}
	}
	// A state change resets the count of the idle call too.
	if got := call("next", map[string]any{"q": "a"}, ""); got != "ok" {
		t.Errorf("after a state change: %s", got)
	}
	for range 2 {
		call("next", map[string]any{"q": "a"}, "")
	}
	if got := call("next", map[string]any{"q": "a"}, ""); got != string(perr.LoopDetected) {
		t.Errorf("loop again: %s", got)
	}
	e.clock.Advance(10_001)
	if got := call("next", map[string]any{"q": "a"}, ""); got != "ok" {
		t.Errorf("after the window: %s", got)
	}
}

func TestLoopDetectionOff(t *testing.T) {
	e := newEnv(t, WithLoop(LoopConfig{Repeats: 0}))
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A"})
	for i := range 20 {
		if got := outcome(t, first(e.invoke("a", nil))); got != "ok" {
			t.Fatalf("call %d: %s", i, got)
		}
	}
}
