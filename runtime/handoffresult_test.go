package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
)

// TestHandoffValueIsReadAfterThePersonActs: a handoff's Result gives the
// call's value once the person is done and the expectation is observed,
// so the agent receives what the person entered, not what the handler
// returned before they were asked. Without Result the
// value is the handler's; a Result that fails is EXECUTION_FAILED; a
// person who cancels leaves Result unread.
func TestHandoffValueIsReadAfterThePersonActs(t *testing.T) {
	tests := []struct {
		name      string
		answer    HandoffOutcome
		result    func(code *stateVar) Handler
		wantValue any
		wantCode  string
		wantReads int
	}{
		{"the value the person entered", HandoffDone, func(code *stateVar) Handler {
			return func(context.Context, *Call) (any, error) { return map[string]any{"code": code.get()}, nil }
		}, map[string]any{"code": "123456"}, "ok", 1},
		{"without a result, the handler's value", HandoffDone, nil, map[string]any{"code": ""}, "ok", 0},
		{"a result that fails", HandoffDone, func(*stateVar) Handler {
			return func(context.Context, *Call) (any, error) { return nil, errors.New("the receipt is not there") }
		}, nil, string(perr.ExecutionFailed), 1},
		{"the person cancels: nothing is read", HandoffCancel, func(code *stateVar) Handler {
			return func(context.Context, *Call) (any, error) { return code.get(), nil }
		}, nil, string(perr.HandoffCancelled), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := newVar("")
			// The person types the bank's code into the page, then says done.
			ui := &scriptUI{answer: tt.answer, effect: func() { code.set("123456") }}
			e := newEnv(t, WithHandoff(ui, 0))
			e.rt.DeclareState(code.state("bank.code"))
			reads := 0
			var result Handler
			if tt.result != nil {
				r := tt.result(code)
				result = func(ctx context.Context, c *Call) (any, error) { reads++; return r(ctx, c) }
			}
			mustDeclare(t, e.rt, Action{ID: "pay", Title: "Pay",
				Run:     func(context.Context, *Call) (any, error) { return map[string]any{"code": code.get()}, nil },
				Handoff: &Handoff{Prompt: "Enter the bank's code", Result: result},
				Expect:  &Expectation{State: "bank.code", Change: "any"}})
			resp, res := e.invoke("pay", nil)
			if got := outcome(t, resp); got != tt.wantCode {
				t.Fatalf("outcome %q, want %q (%+v)", got, tt.wantCode, res.Error)
			}
			if diff := cmp.Diff(tt.wantValue, res.Value); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
			if reads != tt.wantReads {
				t.Errorf("Result read %d times, want %d", reads, tt.wantReads)
			}
		})
	}
}
