package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	perr "github.com/pling-go/pling/errors"
)

// scriptUI plays the person of a handoff.
type scriptUI struct {
	answer HandoffOutcome // 0: never answers
	effect func()
	mu     sync.Mutex
	shown  []HandoffRequest
	ctxs   []context.Context
}

func (u *scriptUI) Show(ctx context.Context, req HandoffRequest) <-chan HandoffOutcome {
	u.mu.Lock()
	u.shown = append(u.shown, req)
	u.ctxs = append(u.ctxs, ctx)
	u.mu.Unlock()
	ch := make(chan HandoffOutcome, 1)
	if u.answer == HandoffDone && u.effect != nil {
		u.effect()
	}
	if u.answer != 0 {
		ch <- u.answer
	}
	return ch
}

func TestHandoff(t *testing.T) {
	tests := []struct {
		name      string
		answer    HandoffOutcome
		effect    bool
		timeoutMs int64 // of the action; 0 takes the runtime's 7000
		want      string
		nowMs     int64
	}{
		{"done, and the effect is observed", HandoffDone, true, 0, "ok", 0},
		{"done without the effect", HandoffDone, false, 0, string(perr.HandoffFailed), 500},
		{"cancel", HandoffCancel, false, 0, string(perr.HandoffCancelled), 0},
		{"never answers: the runtime's bound", 0, false, 0, string(perr.HandoffTimeout), 7000},
		{"never answers: the action's bound", 0, false, 3000, string(perr.HandoffTimeout), 3000},
		{"an unknown answer", HandoffOutcome(99), false, 0, string(perr.HandoffFailed), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signed := newVar(false)
			ui := &scriptUI{answer: tt.answer}
			if tt.effect {
				ui.effect = func() { signed.set(true) }
			}
			e := newEnv(t, WithHandoff(ui, 7*time.Second), WithExpectTimeout(500*time.Millisecond, 50*time.Millisecond))
			e.rt.DeclareState(signed.state("signed"))
			var ran atomic.Int64
			mustDeclare(t, e.rt, Action{ID: "sign", Title: "Sign the contract", Run: counter(&ran, "prepared"),
				Handoff: &Handoff{Prompt: "Please sign", TimeoutMs: tt.timeoutMs},
				Expect:  &Expectation{State: "signed", HasEquals: true, Equals: true}})
			if !capByID(e.describe(""), "sign").Handoff {
				t.Errorf("handoff is not described")
			}
			_, res := e.invoke("sign", nil)
			got := wantOutcome(t, res, tt.want)
			if got == "ok" && (res.Evidence.Handoff != "done" || res.Value != "prepared") {
				t.Errorf("evidence %+v value %v", res.Evidence, res.Value)
			}
			if got == string(perr.HandoffTimeout) {
				if diff := cmp.Diff(map[string]any{"timeoutMs": num(fmt.Sprint(tt.nowMs))}, res.Error.Details); diff != "" {
					t.Errorf("details (-want +got):\n%s", diff)
				}
			}
			if now := e.clock.NowMs(); now != tt.nowMs {
				t.Errorf("clock at %d, want %d", now, tt.nowMs)
			}
			// The handler prepares the handoff: it runs before the person
			// is asked, whatever they answer.
			if ran.Load() != 1 || e.rt.Runs()["sign"] != 1 {
				t.Errorf("handler ran %d times, Runs %v", ran.Load(), e.rt.Runs())
			}
			timeout := tt.timeoutMs
			if timeout == 0 {
				timeout = 7000
			}
			want := []HandoffRequest{{Capability: "sign", Title: "Sign the contract", Prompt: "Please sign", TimeoutMs: timeout}}
			if diff := cmp.Diff(want, ui.shown); diff != "" {
				t.Errorf("shown (-want +got):\n%s", diff)
			}
			if err := ui.ctxs[0].Err(); err == nil {
				t.Errorf("the UI's context is not cancelled after the runtime stopped waiting")
			}
		})
	}
}

func TestHandoffWithoutUIOrFailingHandler(t *testing.T) {
	e := newEnv(t)
	mustDeclare(t, e.rt, Action{ID: "sign", Title: "Sign", Handoff: &Handoff{Prompt: "Sign"}})
	if _, res := e.invoke("sign", nil); res.Error == nil || res.Error.Code != string(perr.ExecutionFailed) {
		t.Errorf("no UI: %+v", res.Error)
	}
	ui := &scriptUI{answer: HandoffDone}
	e = newEnv(t, WithHandoff(ui, 0))
	mustDeclare(t, e.rt, Action{ID: "sign", Title: "Sign", Handoff: &Handoff{Prompt: "Sign"},
		Run: func(context.Context, *Call) (any, error) { return nil, errors.New("no contract") }})
	if _, res := e.invoke("sign", nil); res.Error == nil || res.Error.Code != string(perr.ExecutionFailed) {
		t.Errorf("failing handler: %+v", res.Error)
	}
	if len(ui.shown) != 0 {
		t.Errorf("the handoff was shown after the handler failed")
	}
}
