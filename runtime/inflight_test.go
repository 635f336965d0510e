package runtime

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/waitnotice"
	"github.com/pling-go/pling/schema"
)

// person is an approval backend and a handoff UI whose answers the test
// gives: it signals when it is asked, and when the runtime stops waiting
// (the dialog closes).
type person struct {
	asked   chan struct{}
	closed  chan struct{}
	approve chan bool
	handoff chan HandoffOutcome
}

func newPerson() *person {
	return &person{asked: make(chan struct{}, 1), closed: make(chan struct{}, 1),
		approve: make(chan bool, 1), handoff: make(chan HandoffOutcome, 1)}
}

func (p *person) Approve(ctx context.Context, ch schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision {
	out := make(chan schema.SurfaceApprovalDecision, 1)
	p.asked <- struct{}{}
	go func() {
		select {
		case yes := <-p.approve:
			out <- schema.SurfaceApprovalDecision{Binding: ch.Binding, Approved: yes}
		case <-ctx.Done():
			p.closed <- struct{}{}
		}
	}()
	return out
}

func (p *person) Show(ctx context.Context, _ HandoffRequest) <-chan HandoffOutcome {
	out := make(chan HandoffOutcome, 1)
	p.asked <- struct{}{}
	go func() {
		select {
		case o := <-p.handoff:
			out <- o
		case <-ctx.Done():
			p.closed <- struct{}{}
		}
	}()
	return out
}

func (p *person) wait(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("the person was never %s", what)
	}
}

// TestCancelInFlight: Runtime.Cancel stops an invoke that waits for a
// person, so nothing runs after the caller gave up, and reports false when
// it comes too late or names no invoke of its session.
func TestCancelInFlight(t *testing.T) {
	type outcome struct {
		Cancelled bool   // what Cancel answered
		Code      string // the invoke's business code ("" for success)
		Details   map[string]any
		Runs      int64
		Closed    bool // the dialog closed without an answer
	}
	tests := []struct {
		name    string
		action  string // "refund" (approval) or "pay" (handoff)
		session string // the session Cancel names ("" is the request's own)
		id      string // the id Cancel names ("" is the request's own)
		before  func(p *person)
		ctxEnds bool // the caller's context ends instead of a Cancel
		want    outcome
	}{
		{name: "approval pending", action: "refund",
			want: outcome{Cancelled: true, Code: "PERMISSION_DENIED", Details: map[string]any{"cancelled": true}, Closed: true}},
		{name: "handoff pending", action: "pay",
			want: outcome{Cancelled: true, Code: "HANDOFF_CANCELLED", Details: map[string]any{"cancelled": true}, Runs: 1, Closed: true}},
		{name: "the caller's context ends during the approval", action: "refund", ctxEnds: true,
			want: outcome{Code: "PERMISSION_DENIED", Details: map[string]any{"cancelled": true}, Closed: true}},
		{name: "another session's id", action: "refund", session: "someone-else",
			before: func(p *person) { p.approve <- true },
			want:   outcome{Code: "", Runs: 1}},
		{name: "an unknown id", action: "refund", id: "req_nope",
			before: func(p *person) { p.approve <- true },
			want:   outcome{Code: "", Runs: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPerson()
			var runs atomic.Int64
			rt := New(WithClock(SystemClock{}), WithExpose("*"), WithRateLimit(RateLimit{}),
				WithApprover(p, time.Minute), WithHandoff(p, time.Minute))
			run := func(context.Context, *Call) (any, error) { runs.Add(1); return "ran", nil }
			for _, a := range []Action{
				{ID: "refund", Title: "Refund", Approval: true, Run: run},
				{ID: "pay", Title: "Pay", Handoff: &Handoff{Prompt: "Confirm with your bank"}, Run: run},
			} {
				if _, err := rt.DeclareAction(a); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancelCtx := context.WithCancel(context.Background())
			defer cancelCtx()
			resp := make(chan []byte, 1)
			go func() {
				resp <- rt.Handle(ctx, []byte(`{"protocol":"pling.surface/0.1","id":"req_1","method":"invoke","capability":"`+tt.action+`"}`))
			}()
			p.wait(t, p.asked, "asked")
			if tt.before != nil {
				tt.before(p)
				time.Sleep(50 * time.Millisecond) // the answer goes through
			}
			var got outcome
			if tt.ctxEnds {
				cancelCtx()
			} else {
				session, id := tt.session, tt.id
				if id == "" {
					id = "req_1"
				}
				got.Cancelled = rt.Cancel(session, id)
			}
			var out []byte
			select {
			case out = <-resp:
			case <-time.After(5 * time.Second):
				t.Fatal("the invoke did not answer after the cancel")
			}
			var r struct {
				Result struct {
					Error *struct {
						Code    string         `json:"code"`
						Details map[string]any `json:"details"`
					} `json:"error"`
				} `json:"result"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			if e := r.Result.Error; e != nil {
				got.Code, got.Details = e.Code, e.Details
			}
			got.Runs = runs.Load()
			select {
			case <-p.closed:
				got.Closed = true
			case <-time.After(100 * time.Millisecond):
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s\nresponse: %s", tt.name, diff, out)
			}
			if rt.Cancel("", "req_1") {
				t.Error("Cancel after the answer stopped something")
			}
		})
	}
}

// TestCancelRacesTheApproval: a person approves at the instant the caller
// cancels. Whatever wins, the answer of Cancel and the invoke agree: a
// successful cancel means nothing ran; a late one means the action ran
// and the invoke says so.
func TestCancelRacesTheApproval(t *testing.T) {
	for i := range 200 {
		p := newPerson()
		var runs atomic.Int64
		rt := New(WithClock(SystemClock{}), WithExpose("*"), WithRateLimit(RateLimit{}), WithApprover(p, time.Minute))
		if _, err := rt.DeclareAction(Action{ID: "refund", Title: "Refund", Approval: true,
			Run: func(context.Context, *Call) (any, error) { runs.Add(1); return "ran", nil }}); err != nil {
			t.Fatal(err)
		}
		resp := make(chan []byte, 1)
		go func() {
			resp <- rt.Handle(context.Background(), []byte(`{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"refund"}`))
		}()
		p.wait(t, p.asked, "asked")
		var wg sync.WaitGroup
		var cancelled bool
		wg.Add(2)
		go func() { defer wg.Done(); p.approve <- true }()
		go func() { defer wg.Done(); cancelled = rt.Cancel("", "r") }()
		wg.Wait()
		out := <-resp
		var r schema.SurfaceResponse
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		ran := runs.Load() == 1
		if cancelled == ran {
			t.Fatalf("round %d: Cancel answered %v and the action ran: %v (%s)", i, cancelled, ran, out)
		}
	}
}

// yesPerson approves and finishes every handoff at once.
type yesPerson struct{}

func (yesPerson) Approve(_ context.Context, ch schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision {
	out := make(chan schema.SurfaceApprovalDecision, 1)
	out <- schema.SurfaceApprovalDecision{Binding: ch.Binding, Approved: true}
	return out
}

func (yesPerson) Show(context.Context, HandoffRequest) <-chan HandoffOutcome {
	out := make(chan HandoffOutcome, 1)
	out <- HandoffDone
	return out
}

// TestWaitingNotices: an invoke that asks a person tells the page's hook
// and the in-process caller's hook, with the request id and how long the
// page waits.
func TestWaitingNotices(t *testing.T) {
	tests := []struct {
		name   string
		action Action
		want   Waiting
	}{
		{name: "approval", action: Action{ID: "refund", Title: "Refund", Approval: true},
			want: Waiting{RequestID: "req_1", Capability: "refund", Kind: WaitingApproval, TimeoutMs: 90_000}},
		{name: "handoff with its own timeout", action: Action{ID: "pay", Title: "Pay", Handoff: &Handoff{Prompt: "Bank", TimeoutMs: 45_000}},
			want: Waiting{RequestID: "req_1", Capability: "pay", Kind: WaitingHandoff, TimeoutMs: 45_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var page, caller []Waiting
			rt := New(WithClock(NewFakeClock(0)), WithExpose("*"), WithRateLimit(RateLimit{}),
				WithApprover(yesPerson{}, 90*time.Second), WithHandoff(yesPerson{}, 0),
				WithWaiting(func(w Waiting) { page = append(page, w) }))
			tt.action.Run = func(context.Context, *Call) (any, error) { return nil, nil }
			if _, err := rt.DeclareAction(tt.action); err != nil {
				t.Fatal(err)
			}
			ctx := waitnotice.With(context.Background(), func(w Waiting) { caller = append(caller, w) })
			rt.Handle(ctx, []byte(`{"protocol":"pling.surface/0.1","id":"req_1","method":"invoke","capability":"`+tt.action.ID+`"}`))
			if diff := cmp.Diff([]Waiting{tt.want}, page); diff != "" {
				t.Errorf("the page's notices (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]Waiting{tt.want}, caller); diff != "" {
				t.Errorf("the caller's notices (-want +got):\n%s", diff)
			}
		})
	}
}
