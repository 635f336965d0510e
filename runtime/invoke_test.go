package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/runtime/internal/canon"
	"github.com/pling-go/pling/schema"
)

// sessions returns a verifier that knows the given tokens; any other token
// is SESSION_INVALID.
func sessions(tokens map[string]schema.SurfaceSession) SessionVerifier {
	return SessionVerifierFunc(func(_ context.Context, token string, _ int64) (schema.SurfaceSession, error) {
		s, ok := tokens[token]
		if !ok {
			return schema.SurfaceSession{}, perr.New(perr.SessionInvalid, "", nil)
		}
		return s, nil
	})
}

// twoSessions configures two sessions that reach everything; anonymous
// callers reach everything too (WithAnonymous), a third session the tests
// keep apart from the other two.
func twoSessions() Option {
	verifier := WithSessions(sessions(map[string]schema.SurfaceSession{
		"tok_a": {Subject: "alice", Scope: []string{"*"}, ExpiresAtMs: 1 << 40},
		"tok_b": {Subject: "bob", Scope: []string{"*"}, ExpiresAtMs: 1 << 40},
	}), false)
	return func(cfg *config) { verifier(cfg); WithAnonymous("*")(cfg) }
}

func withSession(req map[string]any, tok string) map[string]any {
	req["session"] = tok
	return req
}

func num(s string) json.Number { return json.Number(s) }

func TestInvokeSuccess(t *testing.T) {
	var feedback []schema.Feedback
	var mu sync.Mutex
	url := "https://shop.example/cart"
	e := newEnv(t,
		WithPage(func(context.Context) (schema.PageInfo, []schema.Feedback) {
			mu.Lock()
			defer mu.Unlock()
			return schema.PageInfo{URL: url, Title: "Cart"}, append([]schema.Feedback(nil), feedback...)
		}))
	count := newVar(0)
	other := newVar("same")
	if _, err := e.rt.DeclareState(count.state("cart.count")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.DeclareState(other.state("other")); err != nil {
		t.Fatal(err)
	}
	feedback = []schema.Feedback{{Level: "info", Message: "Welcome"}}
	var seen Call
	mustDeclare(t, e.rt, Action{ID: "cart.add", Title: "Add to cart",
		Params: map[string]Param{"sku": {Type: "string", Required: true}, "qty": {Type: "integer", Minimum: ptrF(1), Default: 1}},
		Expect: &Expectation{State: "cart.count", Change: "increase"},
		Run: func(_ context.Context, c *Call) (any, error) {
			seen = *c
			count.add(1)
			mu.Lock()
			feedback = append(feedback, schema.Feedback{Level: "success", Message: "Added"})
			url = "https://shop.example/checkout"
			mu.Unlock()
			return map[string]any{"added": c.Input["sku"]}, nil
		}})
	rev := e.describe("").Revision

	req := e.invokeReq("cart.add", map[string]any{"sku": "A1"})
	resp, res := e.invokeWith(req)
	if !resp.OK || res.Error != nil {
		t.Fatalf("invoke failed: %+v %+v", resp.Error, res.Error)
	}
	if *resp.ID != req["id"] {
		t.Errorf("response id %q, want %q", *resp.ID, req["id"])
	}
	if diff := cmp.Diff(map[string]any{"added": "A1"}, res.Value); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
	wantEv := &schema.Evidence{Capability: "cart.add", Summary: "cart.add ran", Expectations: []schema.ExpectationResult{
		{State: "cart.count", Condition: "increase", Before: num("0"), After: num("1"), Met: true}}}
	if diff := cmp.Diff(wantEv, res.Evidence); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	wantObs := &schema.SurfaceObservation{
		States:     map[string]schema.StateChange{"cart.count": {Before: num("0"), After: num("1")}},
		Feedback:   []schema.Feedback{{Level: "success", Message: "Added"}},
		Navigation: &schema.Navigation{From: "https://shop.example/cart", To: "https://shop.example/checkout"},
		Revision:   rev,
	}
	if diff := cmp.Diff(wantObs, res.Observation); diff != "" {
		t.Errorf("observation (-want +got):\n%s", diff)
	}
	wantCall := Call{Capability: "cart.add", Action: "cart.add", RequestID: req["id"].(string),
		Input: map[string]any{"sku": "A1", "qty": 1}}
	if diff := cmp.Diff(wantCall, seen); diff != "" {
		t.Errorf("the handler's call (-want +got):\n%s", diff)
	}
	if got := e.rt.Runs(); !cmp.Equal(got, map[string]int{"cart.add": 1}) {
		t.Errorf("Runs() = %v", got)
	}
}

// A business failure before the run stage reports only the revision.
func TestInvokeFailureObservation(t *testing.T) {
	e := newEnv(t)
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A"})
	rev := e.describe("").Revision
	_, res := e.invoke("nope", nil)
	if res.Error == nil || res.Error.Code != string(perr.ActionNotFound) {
		t.Fatalf("result = %+v", res)
	}
	if diff := cmp.Diff(&schema.SurfaceObservation{Revision: rev}, res.Observation); diff != "" {
		t.Errorf("observation (-want +got):\n%s", diff)
	}
	if res.Value != nil || res.Evidence != nil {
		t.Errorf("a failure carries a value or evidence: %+v", res)
	}
}

func TestHandlerFailures(t *testing.T) {
	long := strings.Repeat("x", 500)
	tests := []struct {
		name    string
		run     Handler
		code    perr.Code
		message string
		details map[string]any
	}{
		{"plain error", func(context.Context, *Call) (any, error) { return nil, errors.New("card declined") },
			perr.ExecutionFailed, "card declined", nil},
		{"error carrying a credential is redacted", func(context.Context, *Call) (any, error) {
			return nil, errors.New("upstream said no to Bearer abcdefghijklmnop")
		}, perr.ExecutionFailed, "upstream said no to [REDACTED]", nil},
		{"long error is cut", func(context.Context, *Call) (any, error) { return nil, errors.New(long) },
			perr.ExecutionFailed, strings.Repeat("x", 199) + "…", nil},
		{"empty error", func(context.Context, *Call) (any, error) { return nil, errors.New("") },
			perr.ExecutionFailed, "The handler failed", nil},
		{"an Action code is kept", func(context.Context, *Call) (any, error) {
			return nil, perr.New(perr.PermissionDenied, "Not your order", map[string]any{"owner": "bob", "password": "x"})
		}, perr.PermissionDenied, "Not your order", map[string]any{"owner": "bob", "password": perr.Redacted}},
		{"a wrapped Action code is kept", func(context.Context, *Call) (any, error) {
			return nil, fmt.Errorf("checkout: %w", perr.New(perr.ActionUnavailable, "Sold out", nil))
		}, perr.ActionUnavailable, "Sold out", nil},
		{"a protocol code from a handler is EXECUTION_FAILED", func(context.Context, *Call) (any, error) {
			return nil, perr.New(perr.RateLimited, "", nil)
		}, perr.ExecutionFailed, "RATE_LIMITED: Too many requests", nil},
		{"a panic", func(context.Context, *Call) (any, error) { panic("boom") },
			perr.ExecutionFailed, "The handler failed", nil},
		{"a panic with an error", func(context.Context, *Call) (any, error) { panic(errors.New("secret internals")) },
			perr.ExecutionFailed, "The handler failed", nil},
		{"a value that is not JSON", func(context.Context, *Call) (any, error) { return make(chan int), nil },
			perr.ExecutionFailed, "The handler returned a value that is not JSON", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			mustDeclare(t, e.rt, Action{ID: "pay", Title: "Pay", Run: tt.run})
			mustDeclare(t, e.rt, Action{ID: "ok", Title: "OK", Run: func(context.Context, *Call) (any, error) { return 1, nil }})
			resp, res := e.invoke("pay", nil)
			if !resp.OK || res.Error == nil {
				t.Fatalf("want a business failure, got %+v %+v", resp, res)
			}
			got := perr.New(perr.Code(res.Error.Code), res.Error.Message, res.Error.Details)
			want := perr.New(tt.code, tt.message, tt.details)
			if diff := cmp.Diff(want.Error(), got.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.details, res.Error.Details); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
			if e.rt.Runs()["pay"] != 1 {
				t.Errorf("Runs() = %v: a failed handler still ran", e.rt.Runs())
			}
			// The runtime keeps serving.
			if got := outcome(t, first(e.invoke("ok", nil))); got != "ok" {
				t.Errorf("the next invoke = %s", got)
			}
		})
	}
}

func first[A, B any](a A, _ B) A { return a }

// Page code other than the handler may panic too. A state reader, a
// records reader or an availability check is guarded (the value is null,
// the kind's rows unlisted, the action unavailable: a declaration
// mistake, TestFailingDeclaration); anything else unexpected at steps 6–10 is INTERNAL_ERROR,
// and the runtime keeps serving (docs/protocol.md §3.3 step 11).
func TestPanicsInPageCode(t *testing.T) {
	boom := func() { panic("boom") }
	tests := []struct {
		name    string
		setup   func(t *testing.T, e *tenv)
		opts    []Option
		method  string
		want    string
		handler bool // whether the "act" handler ran
	}{
		{"a state reader in describe: the value is null", func(t *testing.T, e *tenv) {
			e.rt.DeclareState(State{Key: "bad", Read: func(context.Context) (any, error) { boom(); return nil, nil }})
		}, nil, "describe", "ok", false},
		{"a state reader during invoke", func(t *testing.T, e *tenv) {
			e.rt.DeclareState(State{Key: "bad", Read: func(context.Context) (any, error) { boom(); return nil, nil }})
		}, nil, "invoke", "ok", true},
		{"an availability check", func(t *testing.T, e *tenv) {
			mustDeclare(t, e.rt, Action{ID: "x", Title: "X", Available: func(context.Context, string) Availability { boom(); return Available }})
		}, nil, "describe", "ok", false},
		{"a records reader in describe: a declaration mistake", func(t *testing.T, e *tenv) {
			e.rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) { boom(); return nil, nil }})
		}, nil, "describe", "ok", false},
		{"a records reader that fails in describe: a declaration mistake", func(t *testing.T, e *tenv) {
			e.rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) { return nil, errors.New("db down") }})
		}, nil, "describe", "ok", false},
		{"a region's Active", func(t *testing.T, e *tenv) {
			e.rt.DeclareRegion(Region{ID: "r", Active: func(context.Context) bool { boom(); return true }})
		}, nil, "describe", "protocol:INTERNAL_ERROR", false},
		{"a page reader", nil, []Option{WithPage(func(context.Context) (schema.PageInfo, []schema.Feedback) { boom(); return schema.PageInfo{}, nil })},
			"describe", "protocol:INTERNAL_ERROR", false},
		{"the audit sink", nil, []Option{WithAudit(AuditFunc(func(schema.SurfaceAuditEvent) { boom() }))}, "invoke", "ok", true},
		{"the audit sink on describe", nil, []Option{WithAudit(AuditFunc(func(schema.SurfaceAuditEvent) { boom() }))}, "describe", "ok", false},
		{"a before-hook", func(t *testing.T, e *tenv) {
			e.rt.AddHook(Hook{Before: func(context.Context, *Call) string { boom(); return "" }})
		}, nil, "invoke", "protocol:INTERNAL_ERROR", false},
		{"the policy", nil, []Option{WithPolicy(func(context.Context, *Call) string { boom(); return "" })}, "invoke", "protocol:INTERNAL_ERROR", false},
		{"the session verifier", nil, []Option{WithSessions(SessionVerifierFunc(func(context.Context, string, int64) (schema.SurfaceSession, error) {
			boom()
			return schema.SurfaceSession{}, nil
		}), true)}, "invoke", "protocol:INTERNAL_ERROR", false},
		{"the rate limiter", nil, []Option{WithLimiter(limiterFunc(func() (bool, int64, error) { boom(); return true, 0, nil }))},
			"invoke", "protocol:INTERNAL_ERROR", false},
		{"an expectation predicate, after the run", func(t *testing.T, e *tenv) {
			e.rt.DeclareState(newVar(0).state("s"))
			mustDeclare(t, e.rt, Action{ID: "act2", Title: "A", Run: func(context.Context, *Call) (any, error) { return nil, nil },
				Expect: &Expectation{State: "s", Predicate: func(_, _ any) bool { boom(); return true }}})
		}, nil, "invoke act2", "protocol:INTERNAL_ERROR", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.opts...)
			var ran atomic.Int64
			mustDeclare(t, e.rt, Action{ID: "act", Title: "Act", Run: counter(&ran, "done")})
			if tt.setup != nil {
				tt.setup(t, e)
			}
			var req map[string]any
			switch tt.method {
			case "describe":
				req = e.describeReq()
			case "invoke":
				req = e.invokeReq("act", nil)
			default:
				req = e.invokeReq(strings.TrimPrefix(tt.method, "invoke "), nil)
			}
			if strings.Contains(tt.name, "verifier") {
				req["session"] = "tok"
			}
			var resp schema.SurfaceResponse
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Handle panicked: %v", r)
					}
				}()
				resp, _ = e.send(req)
			}()
			if got := outcome(t, resp); got != tt.want {
				t.Errorf("outcome %s, want %s", got, tt.want)
			}
			if got := ran.Load() == 1; got != tt.handler {
				t.Errorf("handler ran: %v, want %v", got, tt.handler)
			}
			if tt.want == "protocol:INTERNAL_ERROR" {
				// The id was consumed; its replay says how it ended, and
				// nothing about business success.
				resp2, _ := e.send(req)
				if !strings.Contains(tt.name, "verifier") && !strings.Contains(tt.name, "limiter") {
					want := map[string]any{"previous": map[string]any{"completed": true, "ok": false, "code": "INTERNAL_ERROR"}}
					if resp2.Error == nil || resp2.Error.Code != "REPLAY_DETECTED" || !cmp.Equal(want, resp2.Error.Details) {
						t.Errorf("replay after INTERNAL_ERROR = %+v", resp2.Error)
					}
				}
			}
		})
	}
}

type limiterFunc func() (bool, int64, error)

func (f limiterFunc) Allow(context.Context, string, schema.Method, int64) (bool, int64, error) {
	return f()
}

// panickyGuard is a custom replay guard whose Complete panics.
type panickyGuard struct{ *MemoryReplayGuard }

func (panickyGuard) Complete(context.Context, string, string, ReplayRecord) { panic("guard down") }

// Handle "never fails: every failure is a response". A custom replay
// guard whose Complete panics is page-side code like any other.
func TestPanicInReplayGuardComplete(t *testing.T) {
	e := newEnv(t, WithReplayGuard(panickyGuard{NewMemoryReplayGuard(100, 0)}))
	mustDeclare(t, e.rt, Action{ID: "act", Title: "Act"})
	var resp schema.SurfaceResponse
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("BUG: surface.go serve: a panic in ReplayGuard.Complete escapes Handle (%v): the deferred recover "+
					"calls guard.Complete again after a panic, and that second panic is not recovered", r)
			}
		}()
		resp, _ = e.send(e.describeReq())
	}()
	if got := outcome(t, resp); got != "protocol:INTERNAL_ERROR" {
		t.Errorf("outcome %s, want INTERNAL_ERROR", got)
	}
	if n := len(e.audit.Events()); n != 1 {
		t.Errorf("%d audit events, want 1", n)
	}
}

// scriptApprover plays the approval backend.
type scriptApprover struct {
	mode  string // approve, deny, tamper, never, late, replay
	clock *FakeClock
	mu    sync.Mutex
	got   []schema.SurfaceApprovalChallenge
}

func (a *scriptApprover) Approve(_ context.Context, ch schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision {
	a.mu.Lock()
	a.got = append(a.got, ch)
	firstBinding := a.got[0].Binding
	a.mu.Unlock()
	out := make(chan schema.SurfaceApprovalDecision, 1)
	switch a.mode {
	case "approve":
		out <- schema.SurfaceApprovalDecision{Binding: ch.Binding, Approved: true}
	case "deny":
		out <- schema.SurfaceApprovalDecision{Binding: ch.Binding}
	case "tamper":
		out <- schema.SurfaceApprovalDecision{Binding: "sha256:" + strings.Repeat("0", 64), Approved: true}
	case "late":
		a.clock.Advance(ch.ExpiresAtMs - a.clock.NowMs() + 1)
		out <- schema.SurfaceApprovalDecision{Binding: ch.Binding, Approved: true}
	case "replay": // the decision of the first challenge, every time
		out <- schema.SurfaceApprovalDecision{Binding: firstBinding, Approved: true}
	}
	return out
}

func TestApproval(t *testing.T) {
	tests := []struct {
		mode     string
		calls    int    // invokes
		want     string // outcome of the last one
		message  string
		runs     int64
		clockEnd int64
	}{
		{"approve", 1, "ok", "", 1, 0},
		{"deny", 1, string(perr.PermissionDenied), "A person denied the action", 0, 0},
		{"tamper", 1, string(perr.PermissionDenied), "The decision is for a different request", 0, 0},
		{"never", 1, string(perr.PermissionDenied), "The approval expired before a decision", 0, 60_000},
		{"late", 1, string(perr.PermissionDenied), "The approval expired before a decision", 0, 60_001},
		{"replay", 2, string(perr.PermissionDenied), "The decision is for a different request", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			ap := &scriptApprover{mode: tt.mode}
			e := newEnv(t, WithApprover(ap, time.Minute), WithSessions(sessions(map[string]schema.SurfaceSession{
				"tok_secret_a": {Subject: "alice", Scope: []string{"*"}, ExpiresAtMs: 1 << 40}}), true))
			ap.clock = e.clock
			var ran atomic.Int64
			mustDeclare(t, e.rt, Action{ID: "refund", Title: "Refund", Risk: schema.RiskDestructive, Approval: true,
				Params: map[string]Param{"amount": {Type: "number"}}, Record: &RecordRef{Kind: "order"}, Run: counter(&ran, "refunded")})
			orderRecords(t, e.rt, 2)
			var req map[string]any
			var res schema.SurfaceInvokeResult
			for range tt.calls {
				req = withSession(e.invokeReq("refund@order", map[string]any{"record": "ord_1", "amount": 5}), "tok_secret_a")
				_, res = e.invokeWith(req)
			}
			got := "ok"
			if res.Error != nil {
				got = res.Error.Code
				if res.Error.Message != tt.message {
					t.Errorf("message %q, want %q", res.Error.Message, tt.message)
				}
			}
			if got != tt.want {
				t.Fatalf("outcome %s, want %s", got, tt.want)
			}
			if ran.Load() != tt.runs {
				t.Errorf("handler ran %d times, want %d", ran.Load(), tt.runs)
			}
			if got == "ok" && res.Evidence.Approval != "approved" {
				t.Errorf("evidence = %+v", res.Evidence)
			}
			if now := e.clock.NowMs(); now != tt.clockEnd {
				t.Errorf("clock at %d, want %d", now, tt.clockEnd)
			}

			// The challenge: bound to capability, input (record included),
			// session (by digest) and request id; no token in it.
			ch := ap.got[len(ap.got)-1]
			inputDigest, _ := canon.Digest(map[string]any{"record": "ord_1", "amount": 5})
			sessKey := sessionKeyOf("tok_secret_a")
			sessDigest, _ := canon.Digest(sessKey)
			binding, _ := canon.Digest(schema.SurfaceApprovalBinding{Capability: "refund@order", InputDigest: inputDigest,
				Session: sessDigest, RequestID: req["id"].(string), ExpiresAtMs: 60_000})
			want := schema.SurfaceApprovalChallenge{Binding: binding, Capability: "refund@order", Title: "Refund",
				Risk: schema.RiskDestructive, Summary: "refund@order on ord_1", ExpiresAtMs: 60_000,
				Record: &schema.ApprovalRecord{Kind: "order", ID: "ord_1", Label: "#1001"},
				Input:  []schema.ApprovalField{{Name: "amount", Title: "amount", Value: "5"}}}
			if diff := cmp.Diff(want, ch); diff != "" {
				t.Errorf("challenge (-want +got):\n%s", diff)
			}
			if b, _ := json.Marshal(ap.got); strings.Contains(string(b), "tok_secret_a") {
				t.Errorf("a challenge carries the session token: %s", b)
			}
		})
	}
}

func TestApprovalWithoutBackend(t *testing.T) {
	e := newEnv(t)
	var ran atomic.Int64
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A", Approval: true, Run: counter(&ran, nil)})
	if !capByID(e.describe(""), "a").Approval {
		t.Errorf("approval is not described")
	}
	if _, res := e.invoke("a", nil); res.Error == nil || res.Error.Code != string(perr.PermissionDenied) || ran.Load() != 0 {
		t.Errorf("result %+v, ran %d", res.Error, ran.Load())
	}
}

func TestPolicy(t *testing.T) {
	ap := &scriptApprover{mode: "approve"}
	var asked []Call
	e := newEnv(t, WithApprover(ap, 0), WithPolicy(func(_ context.Context, c *Call) string {
		asked = append(asked, *c)
		if n, _ := c.Input["amount"].(json.Number).Float64(); n > 100 {
			return "Refunds over 100 need a manager; token=abcdefgh"
		}
		return ""
	}))
	var ran atomic.Int64
	mustDeclare(t, e.rt, Action{ID: "refund", Title: "Refund", Approval: true, Params: map[string]Param{"amount": {Type: "number", Required: true}},
		Run: counter(&ran, nil)})
	_, res := e.invoke("refund", map[string]any{"amount": 500})
	if res.Error == nil || res.Error.Code != string(perr.PermissionDenied) {
		t.Fatalf("result %+v", res)
	}
	if res.Error.Message != "Refunds over 100 need a manager; [REDACTED]" {
		t.Errorf("message %q (the reason is redacted)", res.Error.Message)
	}
	if ran.Load() != 0 || len(ap.got) != 0 {
		t.Errorf("denied by policy, yet ran %d / asked the approver %d times", ran.Load(), len(ap.got))
	}
	if got := outcome(t, first(e.invoke("refund", map[string]any{"amount": 5}))); got != "ok" || ran.Load() != 1 || len(ap.got) != 1 {
		t.Errorf("allowed: %s, ran %d, approver %d", got, ran.Load(), len(ap.got))
	}
	if len(asked) != 2 || asked[0].Capability != "refund" {
		t.Errorf("policy saw %+v", asked)
	}
}

// The stages of the pipeline in order (docs/protocol.md §4.2): each test makes two
// stages fail and expects the earlier one.
func TestPipelineOrder(t *testing.T) {
	tests := []struct {
		name  string
		act   Action
		input map[string]any
		opts  []Option
		want  perr.Code
	}{
		{"params before availability", Action{Available: func(context.Context, string) Availability { return Unavailable("closed") }},
			map[string]any{"x": 1}, nil, perr.InvalidParams},
		{"availability before policy", Action{Available: func(context.Context, string) Availability { return Unavailable("closed") }},
			nil, []Option{WithPolicy(func(context.Context, *Call) string { return "no" })}, perr.ActionUnavailable},
		{"policy before approval", Action{Approval: true}, nil,
			[]Option{WithPolicy(func(context.Context, *Call) string { return "no" }), WithApprover(&scriptApprover{mode: "approve"}, 0)}, perr.PermissionDenied},
		{"availability with an empty reason", Action{Available: func(context.Context, string) Availability { return Availability{} }},
			nil, nil, perr.ActionUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.opts...)
			var ran atomic.Int64
			tt.act.ID, tt.act.Title, tt.act.Run = "a", "A", counter(&ran, nil)
			mustDeclare(t, e.rt, tt.act)
			_, res := e.invoke("a", tt.input)
			if res.Error == nil || res.Error.Code != string(tt.want) {
				t.Errorf("result %+v, want %s", res.Error, tt.want)
			}
			if ran.Load() != 0 {
				t.Errorf("handler ran")
			}
		})
	}
}

// Availability reasons come from page code: they are redacted and cut, and
// an unavailable action is described with its reason.
func TestAvailabilityReason(t *testing.T) {
	e := newEnv(t)
	reason := "Out of stock " + strings.Repeat("y", 300)
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A", Available: func(context.Context, string) Availability { return Unavailable(reason) }})
	d := e.describe("")
	u := unavailableByID(d, "a")
	if u == nil || len([]rune(u.Reason)) != 200 || !strings.HasSuffix(u.Reason, "…") {
		t.Errorf("unavailable = %+v", d.Context.Unavailable)
	}
	_, res := e.invoke("a", nil)
	if res.Error == nil || res.Error.Code != string(perr.ActionUnavailable) || len([]rune(res.Error.Message)) != 200 {
		t.Errorf("result %+v", res.Error)
	}
}

// Record-aware availability: Available is asked with the record id.
func TestAvailabilityPerRecord(t *testing.T) {
	e := newEnv(t)
	orderRecords(t, e.rt, 2)
	var asked []string
	var mu sync.Mutex
	mustDeclare(t, e.rt, Action{ID: "ship", Title: "Ship", Record: &RecordRef{Kind: "order"},
		Available: func(_ context.Context, rec string) Availability {
			mu.Lock()
			asked = append(asked, rec)
			mu.Unlock()
			if rec == "ord_2" {
				return Unavailable("Already shipped")
			}
			return Available
		}})
	e.describe("")
	if got := outcome(t, first(e.invoke("ship@order", map[string]any{"record": "ord_1"}))); got != "ok" {
		t.Errorf("ord_1: %s", got)
	}
	if got := outcome(t, first(e.invoke("ship@order", map[string]any{"record": "ord_2"}))); got != string(perr.ActionUnavailable) {
		t.Errorf("ord_2: %s", got)
	}
	if asked[0] != "" {
		t.Errorf("describe asked with %q, want \"\"", asked[0])
	}
}

// sessionKeyOf mirrors the gate's session key (a digest of the token).
func sessionKeyOf(token string) string {
	s, _ := (&gate{cfg: &config{clock: NewFakeClock(0), gate: gateConfig{verifier: SessionVerifierFunc(
		func(context.Context, string, int64) (schema.SurfaceSession, error) {
			return schema.SurfaceSession{Scope: []string{"*"}, ExpiresAtMs: 1}, nil
		})}}}).session(context.Background(), &wire.Request{Session: token, HasSession: true}, 0)
	return s.key
}

// A handler that declares or disposes capabilities (a page navigating, a
// dialog opening) is seen in the observation: capabilitiesChanged and the
// new revision. Declaring from inside a handler must not deadlock.
func TestObservationCapabilitiesChanged(t *testing.T) {
	e := newEnv(t, limits(func(l *Limits) { l.MaxStates = 1 }))
	e.rt.DeclareState(newVar(0).state("a"))
	b, c := newVar(0), newVar(0)
	e.rt.DeclareState(b.state("b"))
	e.rt.DeclareState(c.state("c"))
	var h *Handle
	mustDeclare(t, e.rt, Action{ID: "open", Title: "Open", Run: func(context.Context, *Call) (any, error) {
		b.add(1)
		c.add(1)
		var err error
		h, err = e.rt.DeclareAction(Action{ID: "dialog.ok", Title: "OK"})
		return nil, err
	}})
	before := e.describe("").Revision
	_, res := e.invoke("open", nil)
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	after := e.describe("").Revision
	if !res.Observation.CapabilitiesChanged || res.Observation.Revision != after || after == before {
		t.Errorf("observation %+v, revisions %s → %s", res.Observation, before, after)
	}
	want := map[string]schema.StateChange{"b": {Before: num("0"), After: num("1")}}
	if diff := cmp.Diff(want, res.Observation.States); diff != "" || !res.Observation.Truncated {
		t.Errorf("observation states bounded by MaxStates, truncated=%v (-want +got):\n%s", res.Observation.Truncated, diff)
	}
	h.Dispose()
	if e.describe("").Revision != before {
		t.Errorf("revision after disposing is not the one before")
	}
}

// WithPage's one reader is read once by describe and twice by an invoke
// (before the run, for the observation), and gives the observation its
// navigation and new feedback and describe its page and feedback; a reader
// that knows only the page (zero feedback) or only the feedback (zero page)
// gives only that part.
func TestPageReader(t *testing.T) {
	type page struct {
		fb  []schema.Feedback
		url string
	}
	var mu sync.Mutex
	var cur page
	calls := 0
	reset := func() {
		mu.Lock()
		defer mu.Unlock()
		cur = page{fb: []schema.Feedback{{Level: "info", Message: "Welcome"}}, url: "https://shop.example/cart"}
		calls = 0
	}
	both := func(context.Context) (schema.PageInfo, []schema.Feedback) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return schema.PageInfo{URL: cur.url, Title: "Shop"}, append([]schema.Feedback(nil), cur.fb...)
	}
	pageOnly := func(ctx context.Context) (schema.PageInfo, []schema.Feedback) {
		p, _ := both(ctx)
		return p, nil
	}
	feedbackOnly := func(ctx context.Context) (schema.PageInfo, []schema.Feedback) {
		_, fb := both(ctx)
		return schema.PageInfo{}, fb
	}
	placed := []schema.Feedback{{Level: "success", Message: "Placed"}}
	nav := &schema.Navigation{From: "https://shop.example/cart", To: "https://shop.example/thanks"}
	shop := &schema.PageInfo{URL: "https://shop.example/cart", Title: "Shop"}
	welcome := []schema.Feedback{{Level: "info", Message: "Welcome"}}
	tests := []struct {
		name         string
		read         func(context.Context) (schema.PageInfo, []schema.Feedback)
		wantPage     *schema.PageInfo
		wantFeedback []schema.Feedback
		wantNav      *schema.Navigation
		wantObsFb    []schema.Feedback
	}{
		{"page and feedback", both, shop, welcome, nav, placed},
		{"page only", pageOnly, shop, nil, nav, nil},
		{"feedback only", feedbackOnly, nil, welcome, nil, placed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			e := newEnv(t, WithPage(tc.read))
			mustDeclare(t, e.rt, Action{ID: "checkout", Title: "Check out", Run: func(context.Context, *Call) (any, error) {
				mu.Lock()
				cur.fb = append(cur.fb, placed...)
				cur.url = "https://shop.example/thanks"
				mu.Unlock()
				return true, nil
			}})
			d := e.describe("")
			if diff := cmp.Diff(tc.wantPage, d.Context.Page); diff != "" {
				t.Errorf("described page (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFeedback, d.Context.Feedback); diff != "" {
				t.Errorf("described feedback (-want +got):\n%s", diff)
			}
			if calls != 1 {
				t.Errorf("describe read the page %d times, want 1", calls)
			}
			calls = 0
			resp, res := e.invoke("checkout", nil)
			if !resp.OK || res.Error != nil {
				t.Fatalf("invoke failed: %+v %+v", resp.Error, res.Error)
			}
			if calls != 2 {
				t.Errorf("invoke read the page %d times, want 2", calls)
			}
			if diff := cmp.Diff(tc.wantNav, res.Observation.Navigation); diff != "" {
				t.Errorf("navigation (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantObsFb, res.Observation.Feedback); diff != "" {
				t.Errorf("observed feedback (-want +got):\n%s", diff)
			}
		})
	}
}
