package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// Steps and resume tokens: a failed step returns STEP_FAILED with a token
// that continues from that step once, for the same session and capability
// (docs/protocol.md §4.2).
func TestStepsAndResume(t *testing.T) {
	e := newEnv(t, twoSessions(), WithResumeTTL(time.Second))
	var a, b, c atomic.Int64
	failNext := atomic.Bool{}
	failNext.Store(true)
	steps := []Step{
		{Title: "Address", Run: counter(&a, "addr")},
		{Title: "Pay", Run: func(context.Context, *Call) (any, error) {
			b.Add(1)
			if failNext.Swap(false) {
				return nil, errors.New("card declined")
			}
			return "paid", nil
		}},
		{Title: "Confirm", Run: func(_ context.Context, call *Call) (any, error) {
			c.Add(1)
			return fmt.Sprint("confirmed at step ", call.Step), nil
		}},
	}
	mustDeclare(t, e.rt, Action{ID: "checkout", Title: "Checkout", Steps: steps})
	mustDeclare(t, e.rt, Action{ID: "other", Title: "Other", Steps: steps})
	mustDeclare(t, e.rt, Action{ID: "plain", Title: "Plain"})
	if capByID(e.describe(""), "checkout").Steps != 3 {
		t.Errorf("steps are not described")
	}

	invoke := func(cap, tok, resume string) schema.SurfaceInvokeResult {
		t.Helper()
		req := e.invokeReq(cap, nil)
		if tok != "" {
			req["session"] = tok
		}
		if resume != "" {
			req["resume"] = resume
		}
		_, res := e.invokeWith(req)
		return res
	}
	res := invoke("checkout", "tok_a", "")
	if res.Error == nil || res.Error.Code != string(perr.StepFailed) {
		t.Fatalf("result = %+v, want STEP_FAILED", res)
	}
	tok := res.Error.Resume
	if !strings.HasPrefix(tok, "rs_") {
		t.Errorf("resume token = %q", tok)
	}
	wantErr := &schema.ActionFailure{Code: string(perr.StepFailed), Message: "Step 2 of 3 failed: card declined", Resume: tok,
		Details: map[string]any{"step": num("1"), "title": "Pay", "cause": map[string]any{"code": "EXECUTION_FAILED", "message": "card declined"}}}
	if diff := cmp.Diff(wantErr, res.Error); diff != "" {
		t.Errorf("STEP_FAILED (-want +got):\n%s", diff)
	}
	counts := func() [3]int64 { return [3]int64{a.Load(), b.Load(), c.Load()} }
	if got := counts(); got != [3]int64{1, 1, 0} {
		t.Errorf("step runs = %v", got)
	}

	invalid := func(name string, res schema.SurfaceInvokeResult) {
		t.Helper()
		want := map[string]any{"violations": []any{map[string]any{"path": "/resume", "reason": "is not a valid resume token"}}}
		if res.Error == nil || res.Error.Code != string(perr.InvalidParams) || !cmp.Equal(want, res.Error.Details) {
			t.Errorf("%s: %+v, want INVALID_PARAMS on /resume", name, res.Error)
		}
	}
	invalid("another session", invoke("checkout", "tok_b", tok))
	invalid("another capability", invoke("other", "tok_a", tok))
	invalid("no session", invoke("checkout", "", tok))
	invalid("an unknown token", invoke("checkout", "tok_a", "rs_00"))
	if got := counts(); got != [3]int64{1, 1, 0} {
		t.Errorf("a refused resume ran steps: %v", got)
	}
	runsBefore := e.rt.Runs()["checkout"]

	res = invoke("checkout", "tok_a", tok)
	if res.Error != nil {
		t.Fatalf("resume: %+v", res.Error)
	}
	if res.Value != "confirmed at step 2" || res.Evidence.Steps != 2 {
		t.Errorf("resumed result = %v, evidence %+v", res.Value, res.Evidence)
	}
	if got := counts(); got != [3]int64{1, 2, 1} {
		t.Errorf("step runs after resume = %v, want the first step not run again", got)
	}
	if got := e.rt.Runs()["checkout"]; got != runsBefore+1 {
		t.Errorf("Runs = %d, want %d", got, runsBefore+1)
	}
	invalid("the same token twice", invoke("checkout", "tok_a", tok))

	// Expiry.
	failNext.Store(true)
	res = invoke("checkout", "tok_a", "")
	tok2 := res.Error.Resume
	e.clock.Advance(1_001)
	invalid("an expired token", invoke("checkout", "tok_a", tok2))

	// A resume on an action without steps.
	failNext.Store(true)
	tok3 := invoke("checkout", "tok_a", "").Error.Resume
	invalid("an action without steps", invoke("plain", "tok_a", tok3))
}

// A step's own expectation: not met is a STEP_FAILED whose cause is
// EXPECTATION_FAILED.
func TestStepExpectation(t *testing.T) {
	e := newEnv(t)
	s := newVar(0)
	e.rt.DeclareState(s.state("s"))
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A", Steps: []Step{
		{Run: func(context.Context, *Call) (any, error) { s.add(1); return nil, nil }, Expect: &Expectation{State: "s", Change: "increase", TimeoutMs: 10}},
		{Run: func(context.Context, *Call) (any, error) { return nil, nil }, Expect: &Expectation{State: "s", Change: "increase", TimeoutMs: 10}},
	}})
	_, res := e.invoke("a", nil)
	if res.Error == nil || res.Error.Code != string(perr.StepFailed) {
		t.Fatalf("result %+v", res)
	}
	cause, _ := res.Error.Details["cause"].(map[string]any)
	if res.Error.Details["step"] != num("1") || cause["code"] != "EXPECTATION_FAILED" {
		t.Errorf("details = %v", res.Error.Details)
	}
}

// A failing random source makes STEP_FAILED impossible to issue: the
// request is INTERNAL_ERROR, never a success.
func TestStepsWithoutRandomness(t *testing.T) {
	e := newEnv(t, WithRandom(strings.NewReader("")))
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A", Steps: []Step{{Run: func(context.Context, *Call) (any, error) { return nil, errors.New("x") }}}})
	if got := outcome(t, first(e.invoke("a", nil))); got != "protocol:INTERNAL_ERROR" {
		t.Errorf("outcome %s", got)
	}
}
