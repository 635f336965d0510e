package runtime

// Shared test harness for the white-box tests of package runtime: a
// runtime on a FakeClock with everything exposed, request builders, and
// decoders of the Surface responses.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// tenv is one runtime under test.
type tenv struct {
	t     testing.TB
	rt    *Runtime
	clock *FakeClock
	audit *MemoryAudit
	seq   atomic.Int64
}

// newEnv returns a runtime on a fake clock at 0 ms that exposes every
// capability, records audit events and does not rate-limit; opts come last
// and may override any of that.
func newEnv(t testing.TB, opts ...Option) *tenv {
	t.Helper()
	e := &tenv{t: t, clock: NewFakeClock(0), audit: NewMemoryAudit(10_000)}
	base := []Option{WithClock(e.clock), WithExpose("*"), WithAudit(e.audit), WithRateLimit(RateLimit{})}
	e.rt = New(append(base, opts...)...)
	return e
}

// nextID returns a fresh request id.
func (e *tenv) nextID() string { return fmt.Sprintf("req_%d", e.seq.Add(1)) }

// send sends a request object as JSON text and decodes the response.
func (e *tenv) send(req map[string]any) (schema.SurfaceResponse, []byte) {
	e.t.Helper()
	raw, err := json.Marshal(req)
	if err != nil {
		e.t.Fatalf("marshal request: %v", err)
	}
	return e.sendRaw(raw)
}

func (e *tenv) sendRaw(raw []byte) (schema.SurfaceResponse, []byte) {
	e.t.Helper()
	out := e.rt.Handle(context.Background(), raw)
	return decodeResponse(e.t, out), out
}

func decodeResponse(t testing.TB, out []byte) schema.SurfaceResponse {
	t.Helper()
	var resp schema.SurfaceResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, out)
	}
	if resp.Protocol != schema.Protocol {
		t.Fatalf("response protocol = %q\n%s", resp.Protocol, out)
	}
	if resp.OK == (resp.Error != nil) {
		t.Fatalf("response mixes ok and error\n%s", out)
	}
	return resp
}

// invokeReq builds an invoke request with a fresh id.
func (e *tenv) invokeReq(capability string, input map[string]any) map[string]any {
	req := map[string]any{"protocol": schema.Protocol, "id": e.nextID(), "method": "invoke", "capability": capability}
	if input != nil {
		req["input"] = input
	}
	return req
}

func (e *tenv) describeReq() map[string]any {
	return map[string]any{"protocol": schema.Protocol, "id": e.nextID(), "method": "describe"}
}

// invoke sends an invoke and returns the response and its decoded result
// (zero for a protocol failure).
func (e *tenv) invoke(capability string, input map[string]any) (schema.SurfaceResponse, schema.SurfaceInvokeResult) {
	e.t.Helper()
	return e.invokeWith(e.invokeReq(capability, input))
}

func (e *tenv) invokeWith(req map[string]any) (schema.SurfaceResponse, schema.SurfaceInvokeResult) {
	e.t.Helper()
	resp, _ := e.send(req)
	return resp, invokeResult(e.t, resp)
}

func invokeResult(t testing.TB, resp schema.SurfaceResponse) schema.SurfaceInvokeResult {
	t.Helper()
	var res schema.SurfaceInvokeResult
	if resp.OK {
		d := json.NewDecoder(bytes.NewReader(resp.Result))
		d.UseNumber()
		if err := d.Decode(&res); err != nil {
			t.Fatalf("invoke result: %v\n%s", err, resp.Result)
		}
	}
	return res
}

// describe sends a describe (with session when not "") and decodes the
// description; it fails the test on a protocol failure.
func (e *tenv) describe(session string) schema.SurfaceDescription {
	e.t.Helper()
	req := e.describeReq()
	if session != "" {
		req["session"] = session
	}
	resp, out := e.send(req)
	if !resp.OK {
		e.t.Fatalf("describe failed: %s", out)
	}
	var d schema.SurfaceDescription
	if err := json.Unmarshal(resp.Result, &d); err != nil {
		e.t.Fatalf("description: %v\n%s", err, resp.Result)
	}
	return d
}

// describeBytes is the encoded description for the full exposure, without
// the envelope: equal registries give equal bytes.
func (e *tenv) describeBytes() string {
	e.t.Helper()
	b, err := e.rt.describe(context.Background(), &patternExposure{site: []string{"*"}, scope: []string{"*"}}, -1)
	if err != nil {
		e.t.Fatalf("describe: %v", err)
	}
	return string(b)
}

// outcome names how a response ended: "ok", a business code, or
// "protocol:" and a protocol code.
func outcome(t testing.TB, resp schema.SurfaceResponse) string {
	t.Helper()
	if !resp.OK {
		return "protocol:" + resp.Error.Code
	}
	res := invokeResult(t, resp)
	if res.Error != nil {
		return res.Error.Code
	}
	return "ok"
}

func capIDs(d schema.SurfaceDescription) []string {
	ids := []string{}
	for _, c := range d.Capabilities {
		ids = append(ids, c.ID)
	}
	return ids
}

func capByID(d schema.SurfaceDescription, id string) *schema.SurfaceCapability {
	for i := range d.Capabilities {
		if d.Capabilities[i].ID == id {
			return &d.Capabilities[i]
		}
	}
	return nil
}

func unavailableByID(d schema.SurfaceDescription, id string) *schema.Unavailable {
	for i := range d.Context.Unavailable {
		if d.Context.Unavailable[i].ID == id {
			return &d.Context.Unavailable[i]
		}
	}
	return nil
}

// mustDeclare declares an action and fails the test on any error.
func mustDeclare(t testing.TB, rt *Runtime, a Action) *Handle {
	t.Helper()
	h, err := rt.DeclareAction(a)
	if err != nil {
		t.Fatalf("DeclareAction(%s): %v", a.ID, err)
	}
	return h
}

// stateVar is a page state a test can change: a mutex-guarded value read by
// a State.
type stateVar struct {
	mu sync.Mutex
	v  any
}

func newVar(v any) *stateVar { return &stateVar{v: v} }

func (s *stateVar) get() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v
}

func (s *stateVar) set(v any) {
	s.mu.Lock()
	s.v = v
	s.mu.Unlock()
}

func (s *stateVar) add(n int) {
	s.mu.Lock()
	s.v = s.v.(int) + n
	s.mu.Unlock()
}

func (s *stateVar) state(key string) State {
	return State{Key: key, Read: func(context.Context) (any, error) { return s.get(), nil }}
}

// counter returns a handler that counts its runs and returns value.
func counter(n *atomic.Int64, value any) Handler {
	return func(context.Context, *Call) (any, error) {
		n.Add(1)
		return value, nil
	}
}

func perrCode(t testing.TB, err error) perr.Code {
	t.Helper()
	var pe *perr.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *perr.Error", err, err)
	}
	return pe.Code()
}

func ptrF(f float64) *float64 { return &f }
func ptrI(n int) *int         { return &n }

// wantOutcome is an invoke's outcome, "ok" or its error's code; an outcome
// other than want ends the test.
func wantOutcome(t *testing.T, res schema.SurfaceInvokeResult, want string) string {
	t.Helper()
	got := "ok"
	if res.Error != nil {
		got = res.Error.Code
	}
	if got != want {
		t.Fatalf("outcome %s, want %s (%+v)", got, want, res.Error)
	}
	return got
}
