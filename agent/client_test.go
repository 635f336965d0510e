package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// Each recovery rule of docs/protocol.md §5 has a test here that fails if the client
// breaks it. Executions are counted on the server side (handler counters),
// requests by a transport that records what the client sent.

// sent is one request as the client sent it.
type sent struct {
	Method     string
	ID         string
	Capability string
}

// recorder is a transport that records requests and passes them on; after,
// when set, sees each response and may replace it.
type recorder struct {
	next  agent.Transport
	mu    sync.Mutex
	reqs  []sent
	after func(n int, req sent, raw, resp []byte) ([]byte, error)
}

func (r *recorder) RoundTrip(ctx context.Context, raw []byte) ([]byte, error) {
	var s sent
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, s)
	n := len(r.reqs)
	r.mu.Unlock()
	resp, err := r.next.RoundTrip(ctx, raw)
	if err == nil && r.after != nil {
		return r.after(n, s, raw, resp)
	}
	return resp, err
}

func (r *recorder) sent() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.reqs...)
}

func (r *recorder) methods() []string {
	var out []string
	for _, s := range r.sent() {
		out = append(out, s.Method)
	}
	return out
}

// sleeper is a fake wait that records how long it was asked to wait.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

// counter counts the runs of a handler.
type counter struct{ n atomic.Int64 }

func (c *counter) handler(v any) runtime.Handler {
	return func(context.Context, *runtime.Call) (any, error) {
		c.n.Add(1)
		return v, nil
	}
}

func newRuntime(t *testing.T, opts ...runtime.Option) *runtime.Runtime {
	t.Helper()
	return runtime.New(append([]runtime.Option{runtime.WithExpose("*")}, opts...)...)
}

func declare(t *testing.T, rt *runtime.Runtime, a runtime.Action) *runtime.Handle {
	t.Helper()
	h, err := rt.DeclareAction(a)
	if err != nil {
		t.Fatalf("declare %s: %v", a.ID, err)
	}
	return h
}

// scriptedLimiter answers invoke (and describe, when both is set) from a
// script of retry hints: a positive hint refuses with it, 0 allows. After
// the script, it allows everything.
type scriptedLimiter struct {
	mu     sync.Mutex
	script []int64
	method schema.Method
}

func (l *scriptedLimiter) Allow(_ context.Context, _ string, m schema.Method, _ int64) (bool, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m != l.method || len(l.script) == 0 {
		return true, 0, nil
	}
	retry := l.script[0]
	if retry < 0 { // forever
		return false, -retry, nil
	}
	l.script = l.script[1:]
	return retry == 0, retry, nil
}

func failureResponse(t *testing.T, id string, e *perr.Error) []byte {
	t.Helper()
	b, err := schema.Encode(wire.FailureResponse(&id, e))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Rule: RATE_LIMITED — obey retryAfterMs, then resend the same id (a
// request refused at step 7 consumed no id).
func TestRateLimitedWaitsThenResendsTheSameID(t *testing.T) {
	for _, method := range []schema.Method{schema.MethodInvoke, schema.MethodDescribe} {
		t.Run(string(method), func(t *testing.T) {
			var runs counter
			rt := newRuntime(t, runtime.WithLimiter(&scriptedLimiter{script: []int64{50}, method: method}))
			declare(t, rt, runtime.Action{ID: "cart.add", Title: "Add", Run: runs.handler("added")})
			rec := &recorder{next: agent.InProcess(rt)}
			var sl sleeper
			c := agent.New(rec, agent.WithSleep(sl.sleep))

			var err error
			if method == schema.MethodInvoke {
				_, err = c.Invoke(context.Background(), "cart.add", nil)
			} else {
				_, err = c.Describe(context.Background(), nil)
			}
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			got := rec.sent()
			if len(got) != 2 || got[0].ID != got[1].ID {
				t.Fatalf("want the same request sent twice under one id, sent %+v", got)
			}
			if diff := cmp.Diff([]time.Duration{50 * time.Millisecond}, sl.waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			wantRuns := int64(0)
			if method == schema.MethodInvoke {
				wantRuns = 1
			}
			if n := runs.n.Load(); n != wantRuns {
				t.Errorf("handler ran %d times, want %d", n, wantRuns)
			}
		})
	}
}

// Rule: RATE_LIMITED — the wait is bounded: beyond WithMaxRetryWait the
// error comes back at once, without waiting; and only so many waits.
func TestRateLimitedBounds(t *testing.T) {
	tests := []struct {
		name      string
		script    []int64
		opts      []agent.Option
		wantWaits []time.Duration
		wantSent  int
		wantRetry int64
	}{
		{name: "hint beyond the bound: no wait", script: []int64{-60_000},
			opts: []agent.Option{agent.WithMaxRetryWait(time.Second)}, wantSent: 1, wantRetry: 60_000},
		{name: "zero bound: never waits", script: []int64{-5},
			opts: []agent.Option{agent.WithMaxRetryWait(0)}, wantSent: 1, wantRetry: 5},
		{name: "too many waits", script: []int64{-10},
			opts:      []agent.Option{agent.WithMaxWaits(2)},
			wantWaits: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}, wantSent: 3, wantRetry: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs counter
			rt := newRuntime(t, runtime.WithLimiter(&scriptedLimiter{script: tt.script, method: schema.MethodInvoke}))
			declare(t, rt, runtime.Action{ID: "cart.add", Title: "Add", Run: runs.handler(nil)})
			rec := &recorder{next: agent.InProcess(rt)}
			var sl sleeper
			c := agent.New(rec, append([]agent.Option{agent.WithSleep(sl.sleep)}, tt.opts...)...)

			_, err := c.Invoke(context.Background(), "cart.add", nil)
			if !errors.Is(err, perr.New(perr.RateLimited, "", nil)) {
				t.Fatalf("err = %v, want RATE_LIMITED", err)
			}
			var pe *agent.ProtocolError
			if !errors.As(err, &pe) || pe.RetryAfterMs != tt.wantRetry {
				t.Errorf("err = %#v, want a *ProtocolError with retryAfterMs %d", err, tt.wantRetry)
			}
			if diff := cmp.Diff(tt.wantWaits, sl.waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if got := rec.sent(); len(got) != tt.wantSent {
				t.Errorf("sent %d requests, want %d: %+v", len(got), tt.wantSent, got)
			}
			if n := runs.n.Load(); n != 0 {
				t.Errorf("handler ran %d times, want 0", n)
			}
		})
	}
}

// Rule: INTERNAL_ERROR — never resend a write; the outcome is unconfirmed.
// The failure is simulated at the execution boundary: the request reaches
// the runtime (the handler runs) and the answer is replaced by
// INTERNAL_ERROR, or lost.
func TestInternalErrorIsNeverResent(t *testing.T) {
	tests := []struct {
		name     string
		after    func(t *testing.T, id string) ([]byte, error)
		wantCode bool
	}{
		{name: "INTERNAL_ERROR after the handler ran", wantCode: true,
			after: func(t *testing.T, id string) ([]byte, error) {
				return failureResponse(t, id, perr.New(perr.InternalError, "", nil)), nil
			}},
		{name: "the answer was lost",
			after: func(*testing.T, string) ([]byte, error) { return nil, errors.New("connection reset") }},
		{name: "the answer was garbage",
			after: func(*testing.T, string) ([]byte, error) { return []byte(`{"ok":`), nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs counter
			rt := newRuntime(t)
			declare(t, rt, runtime.Action{ID: "order.pay", Title: "Pay", Run: runs.handler("paid"),
				Params: map[string]runtime.Param{"amount": {Type: "number"}}})
			rec := &recorder{next: agent.InProcess(rt)}
			rec.after = func(_ int, req sent, _, resp []byte) ([]byte, error) {
				if req.Method == "invoke" {
					return tt.after(t, req.ID)
				}
				return resp, nil
			}
			c := agent.New(rec, agent.WithSleep((&sleeper{}).sleep))

			_, err := c.Invoke(context.Background(), "order.pay", map[string]any{"amount": 10})
			var ue *agent.UnconfirmedError
			if !errors.As(err, &ue) || !errors.Is(err, agent.ErrUnconfirmed) {
				t.Fatalf("err = %v, want an *UnconfirmedError", err)
			}
			if got := errors.Is(err, perr.New(perr.InternalError, "", nil)); got != tt.wantCode {
				t.Errorf("errors.Is(err, INTERNAL_ERROR) = %v, want %v", got, tt.wantCode)
			}
			if diff := cmp.Diff([]string{"invoke"}, rec.methods()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if n := runs.n.Load(); n != 1 {
				t.Errorf("handler ran %d times, want exactly 1", n)
			}
			// Observe is the read path: a describe, and still no resend.
			d, err := ue.Observe(context.Background())
			if err != nil || len(d.Capabilities) != 1 {
				t.Fatalf("Observe = %+v, %v", d, err)
			}
			if diff := cmp.Diff([]string{"invoke", "describe"}, rec.methods()); diff != "" {
				t.Errorf("requests after Observe (-want +got):\n%s", diff)
			}
			if n := runs.n.Load(); n != 1 {
				t.Errorf("handler ran %d times after Observe, want 1", n)
			}
		})
	}
}

// Rule: REPLAY_DETECTED — do not mint a new id for the same intent; the
// error carries details.previous.
func TestReplayDetectedMintsNoNewID(t *testing.T) {
	t.Run("duplicate delivery", func(t *testing.T) {
		var runs counter
		rt := newRuntime(t)
		declare(t, rt, runtime.Action{ID: "order.pay", Title: "Pay", Run: runs.handler("paid")})
		inner := agent.InProcess(rt)
		// The network delivers the request twice; the client sees the
		// answer to the second delivery.
		dup := agent.TransportFunc(func(ctx context.Context, raw []byte) ([]byte, error) {
			if _, err := inner.RoundTrip(ctx, raw); err != nil {
				return nil, err
			}
			return inner.RoundTrip(ctx, raw)
		})
		rec := &recorder{next: dup}
		c := agent.New(rec)

		_, err := c.Invoke(context.Background(), "order.pay", nil)
		var re *agent.ReplayError
		if !errors.As(err, &re) || !errors.Is(err, perr.New(perr.ReplayDetected, "", nil)) {
			t.Fatalf("err = %v, want a *ReplayError", err)
		}
		if diff := cmp.Diff(agent.Previous{Completed: true, OK: true}, re.Previous); diff != "" {
			t.Errorf("previous (-want +got):\n%s", diff)
		}
		if got := rec.sent(); len(got) != 1 {
			t.Errorf("the client sent %d requests, want 1 (no new id): %+v", len(got), got)
		}
		if n := runs.n.Load(); n != 1 {
			t.Errorf("handler ran %d times, want 1", n)
		}
	})
	t.Run("the caller resends an intent under its id", func(t *testing.T) {
		var runs counter
		rt := newRuntime(t)
		declare(t, rt, runtime.Action{ID: "order.pay", Title: "Pay", Run: runs.handler("paid")})
		rec := &recorder{next: agent.InProcess(rt)}
		c := agent.New(rec)
		intent := c.NewID()

		if _, err := c.Invoke(context.Background(), "order.pay", nil, agent.WithRequestID(intent)); err != nil {
			t.Fatal(err)
		}
		_, err := c.Invoke(context.Background(), "order.pay", nil, agent.WithRequestID(intent))
		var re *agent.ReplayError
		if !errors.As(err, &re) || re.RequestID != intent || !re.Previous.Completed || !re.Previous.OK {
			t.Fatalf("err = %#v, want a *ReplayError for %s with a completed previous", err, intent)
		}
		want := []sent{{"invoke", intent, "order.pay"}, {"invoke", intent, "order.pay"}}
		if diff := cmp.Diff(want, rec.sent()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if n := runs.n.Load(); n != 1 {
			t.Errorf("handler ran %d times, want 1", n)
		}
	})
}

// Rule: ACTION_NOT_FOUND — describe again (once); retry only when the same
// capability is listed now; never a similar id.
func TestActionNotFoundDescribesAgain(t *testing.T) {
	tests := []struct {
		name       string
		capability string
		input      map[string]any
		hasCart    bool // the page declares cart.add from the start
		appear     bool // the page declares cart.add after the first answer
		wantOK     bool
		wantSent   []string
	}{
		{name: "the capability appears: retried", capability: "cart.add", appear: true, wantOK: true,
			wantSent: []string{"invoke", "describe", "invoke"}},
		{name: "it does not: no retry", capability: "cart.add",
			wantSent: []string{"invoke", "describe"}},
		{name: "a similar id is listed: no retry", capability: "cart.ad", hasCart: true,
			wantSent: []string{"invoke", "describe"}},
		{name: "folded: the record does not exist: no retry", capability: "approve@order",
			input: map[string]any{"record": "ord_9"}, wantSent: []string{"invoke", "describe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs counter
			rt := newRuntime(t)
			rt.DeclareRecords(runtime.Records{Kind: "order", Read: func(context.Context) ([]runtime.RecordItem, error) {
				return []runtime.RecordItem{{ID: "ord_1", Label: "#1"}}, nil
			}})
			declare(t, rt, runtime.Action{ID: "approve", Title: "Approve", Record: &runtime.RecordRef{Kind: "order"}, Run: runs.handler(true)})
			cart := runtime.Action{ID: "cart.add", Title: "Add", Run: runs.handler("added")}
			if tt.hasCart {
				declare(t, rt, cart)
			}
			rec := &recorder{next: agent.InProcess(rt)}
			rec.after = func(n int, _ sent, _, resp []byte) ([]byte, error) {
				if n == 1 && tt.appear {
					declare(t, rt, cart) // the page rendered it meanwhile
				}
				return resp, nil
			}
			c := agent.New(rec)

			res, err := c.Invoke(context.Background(), tt.capability, tt.input)
			if diff := cmp.Diff(tt.wantSent, rec.methods()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			for _, s := range rec.sent() {
				if s.Method == "invoke" && s.Capability != tt.capability {
					t.Errorf("invoked %q, a capability other than %q", s.Capability, tt.capability)
				}
			}
			if tt.wantOK {
				if err != nil {
					t.Fatalf("Invoke: %v", err)
				}
				if ids := rec.sent(); ids[0].ID == ids[2].ID {
					t.Errorf("the retry reused the consumed id %s", ids[0].ID)
				}
				if string(res.Value) != `"added"` || runs.n.Load() != 1 {
					t.Errorf("value %s, runs %d; want \"added\", 1", res.Value, runs.n.Load())
				}
				return
			}
			var be *agent.BusinessError
			if !errors.As(err, &be) || be.Code != perr.ActionNotFound {
				t.Fatalf("err = %v, want ACTION_NOT_FOUND", err)
			}
			if be.Observed == nil {
				t.Errorf("the describe-again description is not attached")
			}
			if n := runs.n.Load(); n != 0 {
				t.Errorf("handler ran %d times, want 0", n)
			}
		})
	}
}

// Rule: CAPABILITY_NOT_EXPOSED — describe again (once); retry only when
// the capability is exposed now.
func TestCapabilityNotExposedDescribesAgain(t *testing.T) {
	for _, widen := range []bool{true, false} {
		name := map[bool]string{true: "scope widened: retried", false: "still outside: no retry"}[widen]
		t.Run(name, func(t *testing.T) {
			var scope atomic.Value
			scope.Store([]string{"cart.*"})
			verifier := runtime.SessionVerifierFunc(func(_ context.Context, token string, nowMs int64) (schema.SurfaceSession, error) {
				return schema.SurfaceSession{Subject: "alice", Scope: scope.Load().([]string), ExpiresAtMs: nowMs + 60_000}, nil
			})
			var runs counter
			rt := newRuntime(t, runtime.WithSessions(verifier, true))
			declare(t, rt, runtime.Action{ID: "order.refund", Title: "Refund", Run: runs.handler("refunded")})
			rec := &recorder{next: agent.InProcess(rt)}
			rec.after = func(n int, _ sent, _, resp []byte) ([]byte, error) {
				if n == 1 && widen {
					scope.Store([]string{"*"}) // a person granted more
				}
				return resp, nil
			}
			c := agent.New(rec, agent.WithSession("tok"))

			_, err := c.Invoke(context.Background(), "order.refund", nil)
			want := []string{"invoke", "describe"}
			if widen {
				want = append(want, "invoke")
			}
			if diff := cmp.Diff(want, rec.methods()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if widen {
				if err != nil || runs.n.Load() != 1 {
					t.Fatalf("err %v, runs %d; want success after one retry", err, runs.n.Load())
				}
				return
			}
			var pe *agent.ProtocolError
			if !errors.As(err, &pe) || pe.Code != perr.CapabilityNotExposed {
				t.Fatalf("err = %v, want CAPABILITY_NOT_EXPOSED", err)
			}
			if runs.n.Load() != 0 {
				t.Errorf("handler ran")
			}
		})
	}
}

// Rules: PERMISSION_DENIED — stop and involve a person; session errors —
// reauthenticate. Neither is retried, nor followed by a describe.
func TestStopsWithoutRetry(t *testing.T) {
	expired := runtime.SessionVerifierFunc(func(context.Context, string, int64) (schema.SurfaceSession, error) {
		return schema.SurfaceSession{}, perr.New(perr.SessionExpired, "", nil)
	})
	revoked := runtime.SessionVerifierFunc(func(_ context.Context, _ string, now int64) (schema.SurfaceSession, error) {
		return schema.SurfaceSession{Subject: "a", Scope: []string{"*"}, ExpiresAtMs: now + 1000, Revoked: true}, nil
	})
	tests := []struct {
		name     string
		rtOpts   []runtime.Option
		session  string
		code     perr.Code
		business bool
	}{
		{name: "PERMISSION_DENIED", code: perr.PermissionDenied, business: true,
			rtOpts: []runtime.Option{runtime.WithPolicy(func(context.Context, *runtime.Call) string { return "refunds need a manager" })}},
		{name: "SESSION_EXPIRED", code: perr.SessionExpired, session: "tok",
			rtOpts: []runtime.Option{runtime.WithSessions(expired, true)}},
		{name: "SESSION_REVOKED", code: perr.SessionRevoked, session: "tok",
			rtOpts: []runtime.Option{runtime.WithSessions(revoked, true)}},
		{name: "SESSION_REQUIRED", code: perr.SessionRequired,
			rtOpts: []runtime.Option{runtime.WithSessions(expired, true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs counter
			rt := newRuntime(t, tt.rtOpts...)
			declare(t, rt, runtime.Action{ID: "order.refund", Title: "Refund", Run: runs.handler(nil)})
			rec := &recorder{next: agent.InProcess(rt)}
			var sl sleeper
			c := agent.New(rec, agent.WithSession(tt.session), agent.WithSleep(sl.sleep))

			_, err := c.Invoke(context.Background(), "order.refund", nil)
			if !errors.Is(err, perr.New(tt.code, "", nil)) {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
			var be *agent.BusinessError
			var pe *agent.ProtocolError
			if tt.business && !errors.As(err, &be) || !tt.business && !errors.As(err, &pe) {
				t.Errorf("err is %T, want the typed %s", err, map[bool]string{true: "*BusinessError", false: "*ProtocolError"}[tt.business])
			}
			if diff := cmp.Diff([]string{"invoke"}, rec.methods()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if runs.n.Load() != 0 || len(sl.waits) != 0 {
				t.Errorf("runs %d, waits %v; want none", runs.n.Load(), sl.waits)
			}
		})
	}
}

// Rule: EXPECTATION_FAILED — observe the page first; a partial success may
// exist. The client describes and does not invoke again.
func TestExpectationFailedObservesBeforeAnything(t *testing.T) {
	var runs counter
	rt := newRuntime(t, runtime.WithClock(runtime.NewFakeClock(0)))
	rt.DeclareState(runtime.State{Key: "cart.count", Read: func(context.Context) (any, error) { return 3, nil }})
	declare(t, rt, runtime.Action{ID: "cart.add", Title: "Add", Run: runs.handler(nil),
		Expect: &runtime.Expectation{State: "cart.count", Change: "increase"}})
	rec := &recorder{next: agent.InProcess(rt)}
	c := agent.New(rec)

	_, err := c.Invoke(context.Background(), "cart.add", nil)
	var be *agent.BusinessError
	if !errors.As(err, &be) || !errors.Is(err, perr.New(perr.ExpectationFailed, "", nil)) {
		t.Fatalf("err = %v, want EXPECTATION_FAILED", err)
	}
	if diff := cmp.Diff([]string{"invoke", "describe"}, rec.methods()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if be.Observed == nil || be.ObserveErr != nil {
		t.Fatalf("observed %v, %v; want the description", be.Observed, be.ObserveErr)
	}
	if diff := cmp.Diff(map[string]any{"cart.count": json.Number("3")}, be.Observed.Context.States); diff != "" {
		t.Errorf("observed states (-want +got):\n%s", diff)
	}
	if be.Observation == nil || be.Observation.Revision == "" {
		t.Errorf("the invoke's own observation is missing: %+v", be.Observation)
	}
	if n := runs.n.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}

// STEP_FAILED carries a resume token, and Resume continues from the failed
// step.
func TestStepFailedResumes(t *testing.T) {
	var first, second counter
	var failed atomic.Bool
	rt := newRuntime(t)
	declare(t, rt, runtime.Action{ID: "checkout", Title: "Checkout", Steps: []runtime.Step{
		{Title: "address", Run: first.handler(nil)},
		{Title: "pay", Run: func(context.Context, *runtime.Call) (any, error) {
			second.n.Add(1)
			if failed.CompareAndSwap(false, true) {
				return nil, errors.New("card declined")
			}
			return "paid", nil
		}},
	}})
	c := agent.New(agent.InProcess(rt))

	_, err := c.Invoke(context.Background(), "checkout", nil)
	var be *agent.BusinessError
	if !errors.As(err, &be) || be.Code != perr.StepFailed || be.Resume == "" {
		t.Fatalf("err = %v, want STEP_FAILED with a resume token", err)
	}
	res, err := c.Invoke(context.Background(), "checkout", nil, agent.WithResume(be.Resume))
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if string(res.Value) != `"paid"` || first.n.Load() != 1 || second.n.Load() != 2 {
		t.Errorf("value %s, step runs %d/%d; want \"paid\", 1/2", res.Value, first.n.Load(), second.n.Load())
	}
}

func TestInvokeResult(t *testing.T) {
	rt := newRuntime(t)
	count := 0
	rt.DeclareState(runtime.State{Key: "n", Read: func(context.Context) (any, error) { return count, nil }})
	declare(t, rt, runtime.Action{ID: "inc", Title: "Increment", Run: func(context.Context, *runtime.Call) (any, error) {
		count++
		return map[string]any{"n": count}, nil
	}, Expect: &runtime.Expectation{State: "n", Change: "increase"}})
	c := agent.New(agent.InProcess(rt), agent.WithIDPrefix("test"))

	res, err := c.Invoke(context.Background(), "inc", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `{"n":1}` || res.Evidence == nil || len(res.Evidence.Expectations) != 1 || !res.Evidence.Expectations[0].Met {
		t.Errorf("result %+v", res)
	}
	if res.Observation == nil || res.Observation.States["n"].After != json.Number("1") {
		t.Errorf("observation %+v", res.Observation)
	}
	if !wire.ValidID(res.RequestID) || res.RequestID[:5] != "test-" {
		t.Errorf("request id %q", res.RequestID)
	}
}

func TestIDs(t *testing.T) {
	tests := []struct {
		name, prefix, wantPrefix string
	}{
		{"default", "", "agent-"},
		{"kept", "bot.7:a", "bot.7:a-"},
		{"cleaned", "my agent/ü", "my-agent---"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agent.New(nil, agent.WithIDPrefix(tt.prefix))
			b := agent.New(nil, agent.WithIDPrefix(tt.prefix))
			seen := map[string]bool{}
			for i := 0; i < 1000; i++ {
				for _, id := range []string{a.NewID(), b.NewID()} {
					if !wire.ValidID(id) || seen[id] || id[:len(tt.wantPrefix)] != tt.wantPrefix {
						t.Fatalf("id %q: valid %v, seen %v, want prefix %q", id, wire.ValidID(id), seen[id], tt.wantPrefix)
					}
					seen[id] = true
				}
			}
		})
	}
	c := agent.New(nil)
	if _, err := c.Invoke(context.Background(), "x", nil, agent.WithRequestID("not valid")); err == nil {
		t.Errorf("an invalid request id was accepted")
	}
}

func TestErrorsMatchTheRegistry(t *testing.T) {
	pe := &agent.ProtocolError{Code: perr.RateLimited, Message: "Zu viele Anfragen", RetryAfterMs: 1200}
	be := &agent.BusinessError{Code: perr.PermissionDenied, Message: "nein"}
	tests := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{"protocol by code", pe, perr.New(perr.RateLimited, "", nil), true},
		{"protocol, other code", pe, perr.New(perr.InternalError, "", nil), false},
		{"protocol by type", pe, &agent.ProtocolError{Code: perr.RateLimited}, true},
		{"business by code", be, perr.New(perr.PermissionDenied, "", nil), true},
		{"business is not protocol", be, &agent.ProtocolError{Code: perr.PermissionDenied}, false},
		{"wrapped", errors.Join(errors.New("x"), be), perr.New(perr.PermissionDenied, "other text", nil), true},
		{"replay unwraps", &agent.ReplayError{ProtocolError: &agent.ProtocolError{Code: perr.ReplayDetected}}, perr.New(perr.ReplayDetected, "", nil), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errors.Is(tt.err, tt.target); got != tt.want {
				t.Errorf("errors.Is = %v, want %v", got, tt.want)
			}
		})
	}
	var re *perr.Error
	if !errors.As(pe, &re) || re.Code() != perr.RateLimited || re.RetryAfterMs() != 1200 {
		t.Errorf("errors.As(*perr.Error) = %v", re)
	}
}

func TestBadResponses(t *testing.T) {
	tests := []struct {
		name string
		resp string
	}{
		{"not JSON", `nope`},
		{"other protocol", `{"protocol":"x/1","id":"ID","ok":true,"result":{}}`},
		{"no ok", `{"protocol":"pling.surface/0.1","id":"ID"}`},
		{"other id", `{"protocol":"pling.surface/0.1","id":"other","ok":true,"result":{}}`},
		{"ok without result", `{"protocol":"pling.surface/0.1","id":"ID","ok":true}`},
		{"failure without code", `{"protocol":"pling.surface/0.1","id":"ID","ok":false,"error":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := agent.TransportFunc(func(_ context.Context, raw []byte) ([]byte, error) {
				var s sent
				json.Unmarshal(raw, &s)
				return []byte(replaceID(tt.resp, s.ID)), nil
			})
			c := agent.New(tr)
			if _, err := c.Describe(context.Background(), nil); !errors.Is(err, agent.ErrBadResponse) {
				t.Errorf("describe: err = %v, want ErrBadResponse", err)
			}
			if _, err := c.Invoke(context.Background(), "x", nil); !errors.Is(err, agent.ErrUnconfirmed) || !errors.Is(err, agent.ErrBadResponse) {
				t.Errorf("invoke: err = %v, want unconfirmed and ErrBadResponse", err)
			}
		})
	}
}

func replaceID(s, id string) string {
	b, _ := json.Marshal(id)
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if i+4 <= len(s) && s[i:i+4] == `"ID"` {
			out = append(out, b...)
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}
