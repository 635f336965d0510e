package mcp_test

import (
	stdcmp "cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/testing/jsontrees"
	"github.com/pling-go/pling/internal/testing/syncbuf"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// page is a small shop: a cart, a folded row action, a read, and a failing
// action.
type page struct {
	rt    *runtime.Runtime
	count atomic.Int64
	runs  atomic.Int64
}

func newPage(t *testing.T, opts ...runtime.Option) *page {
	t.Helper()
	p := &page{rt: runtime.New(append([]runtime.Option{runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0))}, opts...)...)}
	must := func(_ *runtime.Handle, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(p.rt.DeclareState(runtime.State{Key: "cart.count", Read: func(context.Context) (any, error) { return p.count.Load(), nil }}))
	must(p.rt.DeclareRecords(runtime.Records{Kind: "order", Read: func(context.Context) ([]runtime.RecordItem, error) {
		return []runtime.RecordItem{{ID: "ord_1", Label: "#1001"}, {ID: "ord_2", Label: "#1002", Offscreen: true}}, nil
	}}))
	one := 1.0
	must(p.rt.DeclareAction(runtime.Action{ID: "cart.add", Title: "Add to cart", Description: "Adds one item",
		Params: map[string]runtime.Param{"sku": {Type: "string", Required: true}, "qty": {Type: "integer", Minimum: &one}},
		Run: func(context.Context, *runtime.Call) (any, error) {
			p.runs.Add(1)
			return map[string]any{"count": p.count.Add(1)}, nil
		},
		Expect: &runtime.Expectation{State: "cart.count", Change: "increase"}}))
	must(p.rt.DeclareAction(runtime.Action{ID: "approve", Title: "Approve order", Record: &runtime.RecordRef{Kind: "order"},
		Params: map[string]runtime.Param{"note": {Type: "string"}},
		Run: func(_ context.Context, c *runtime.Call) (any, error) {
			p.runs.Add(1)
			return "approved " + c.Record, nil
		}}))
	must(p.rt.DeclareAction(runtime.Action{ID: "cart.view", Title: "View cart", Risk: schema.RiskRead,
		Run: func(context.Context, *runtime.Call) (any, error) { return p.count.Load(), nil }}))
	must(p.rt.DeclareAction(runtime.Action{ID: "cart.clear", Title: "Clear cart", Risk: schema.RiskDestructive,
		Run: func(context.Context, *runtime.Call) (any, error) {
			p.runs.Add(1)
			return nil, errors.New("the cart is locked")
		}}))
	return p
}

// inProcessSession bridges a new page (newPage) in process and connects
// a client to the bridge.
func inProcessSession(t *testing.T) (*page, *session) {
	t.Helper()
	p := newPage(t)
	return p, connectRuntime(t, p.rt)
}

// connectRuntime connects a client to a bridge over rt, in this process.
func connectRuntime(t *testing.T, rt *runtime.Runtime) *session {
	t.Helper()
	return connect(t, runtimeBridge(rt))
}

// runtimeBridge is a bridge over an agent client of rt, in this process.
func runtimeBridge(rt *runtime.Runtime, opts ...agent.Option) *plingmcp.Bridge {
	return plingmcp.NewBridge(agent.New(agent.InProcess(rt), opts...))
}

// listTools asks for the tool list; a failure ends the test.
func (s *session) listTools(t *testing.T) *sdk.ListToolsResult {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// counting counts the describes a transport carries.
type counting struct {
	next      agent.Transport
	describes atomic.Int64
}

func (c *counting) RoundTrip(ctx context.Context, raw []byte) ([]byte, error) {
	var m struct{ Method string }
	_ = json.Unmarshal(raw, &m)
	if m.Method == "describe" {
		c.describes.Add(1)
	}
	return c.next.RoundTrip(ctx, raw)
}

// session is an MCP client session connected to a bridge over in-memory
// transports, with the tools/list_changed notifications it received.
type session struct {
	*sdk.ClientSession
	changed chan struct{}
}

// connect loads the tool list first (as pling mcp does), so that the
// notifications the client sees are the page's changes only.
func connect(t *testing.T, b *plingmcp.Bridge) *session {
	t.Helper()
	return connectVersion(t, b, "")
}

// connectVersion connects a client that asks for an MCP protocol version
// ("" for the SDK's newest, which subscribes to notifications with
// subscriptions/listen; older ones get them on the session).
func connectVersion(t *testing.T, b *plingmcp.Bridge, version string) *session {
	t.Helper()
	ctx := context.Background()
	_, _ = b.Refresh(ctx) // a failure shows in the first tools/list
	st, ct := sdk.NewInMemoryTransports()
	ss, err := b.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{changed: make(chan struct{}, 16)}
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	s.ClientSession = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return s
}

func (s *session) waitChanged(t *testing.T) {
	t.Helper()
	select {
	case <-s.changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
}

func (s *session) toolNames(t *testing.T) []string {
	t.Helper()
	res := s.listTools(t)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// The bridge lists what modeltool.List lists in the page: the same names,
// descriptions and parameters (record included for folded capabilities).
func TestListToolsMatchesRuntimeTools(t *testing.T) {
	p, s := inProcessSession(t)

	res := s.listTools(t)
	want, err := modeltool.List(p.rt, context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	type tool struct {
		Name, Description string
		Schema            any
	}
	var got, exp []tool
	// A folded tool's description and record property also say how to
	// name a record and which ones it acts on (records.go); the rest is
	// modeltool.List' text.
	rules := map[string]string{}
	for _, tl := range res.Tools {
		desc := tl.Description
		if i := strings.Index(desc, ". Only orders in view"); i >= 0 {
			desc, rules[tl.Name] = desc[:i], desc[i+2:]
		}
		sch := jsontrees.RoundTrip(t, tl.InputSchema).(map[string]any)
		props, _ := sch["properties"].(map[string]any)
		if rec, ok := props["record"].(map[string]any); ok {
			rules[tl.Name+".record"] = rec["description"].(string)
			rec["description"] = "(the bridge's)"
		}
		got = append(got, tool{tl.Name, desc, sch})
	}
	for _, tl := range want {
		sch := jsontrees.RoundTrip(t, tl.Parameters).(map[string]any)
		// The bridge leaves out "additionalProperties": false (the page
		// checks the arguments; TestBusinessFailureIsAToolError).
		delete(sch, "additionalProperties")
		props, _ := sch["properties"].(map[string]any)
		if rec, ok := props["record"].(map[string]any); ok {
			rec["description"] = "(the bridge's)"
		}
		// modeltool.List says the same rule (without the bridge's revealer
		// names): compared above, through the bridge. The page's words
		// are quoted and marked as the page's (bounds.go).
		desc, _, _ := strings.Cut(tl.Description, ". Only orders in view")
		quoted, _ := json.Marshal(desc)
		exp = append(exp, tool{tl.Name, "From the page: " + string(quoted), sch})
	}
	if diff := cmp.Diff(map[string]string{
		"approve__order":        "Only orders in view (else ACTION_UNAVAILABLE: scroll or filter the page first).",
		"approve__order.record": `The order's id or label, e.g. "ord_1" or "#1001" (2 in all)`,
	}, rules); diff != "" {
		t.Errorf("record rules (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(exp, got); diff != "" {
		t.Errorf("tools (-modeltool.List +MCP):\n%s", diff)
	}
	annotations := map[string][2]bool{} // name → readOnly, destructive
	for _, tl := range res.Tools {
		if tl.Annotations.Title != "" {
			t.Errorf("%s: the title again in the annotations", tl.Name)
		}
		if tl.Annotations.ReadOnlyHint {
			if tl.Annotations.DestructiveHint != nil {
				t.Errorf("%s: read-only with a destructive hint", tl.Name)
			}
			annotations[tl.Name] = [2]bool{true, false}
			continue
		}
		annotations[tl.Name] = [2]bool{false, *tl.Annotations.DestructiveHint}
	}
	if diff := cmp.Diff(map[string][2]bool{"approve__order": {}, "cart_add": {}, "cart_clear": {false, true}, "cart_view": {true, false}}, annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	approve := jsontrees.RoundTrip(t, res.Tools[0].InputSchema).(map[string]any)
	if diff := cmp.Diff([]any{"record"}, approve["required"]); diff != "" {
		t.Errorf("approve@order requires (-want +got):\n%s", diff)
	}
}

func TestCallTool(t *testing.T) {
	p, s := inProcessSession(t)

	// The structured content is lean: the value, the evidence (its
	// expectations without the values the changed states carry), the
	// changed states; no request id, revision or whole observation.
	tests := []struct {
		name      string
		tool      string
		args      any
		wantValue any
		want      map[string]any // the rest of the structured content
	}{
		{"plain", "cart_add", map[string]any{"sku": "A1", "qty": 2}, map[string]any{"count": float64(1)}, map[string]any{
			"evidence": map[string]any{"expectations": []any{map[string]any{"state": "cart.count", "condition": "increase", "met": true}}},
			"changed":  map[string]any{"cart.count": map[string]any{"before": float64(0), "after": float64(1)}},
		}},
		{"folded, with record", "approve__order", map[string]any{"record": "ord_1", "note": "ok"}, "approved ord_1", map[string]any{
			"evidence": map[string]any{"record": "ord_1"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, s, tt.tool, tt.args)
			if res.IsError {
				t.Fatalf("isError: %v", res.Content)
			}
			sc := jsontrees.RoundTrip(t, res.StructuredContent).(map[string]any)
			if diff := cmp.Diff(tt.wantValue, sc["value"]); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
			delete(sc, "value")
			if diff := cmp.Diff(tt.want, sc); diff != "" {
				t.Errorf("structured content (-want +got):\n%s", diff)
			}
			// The text is for a model: what ran and its value, not the
			// structured content again.
			if text := res.Content[0].(*sdk.TextContent).Text; !strings.HasPrefix(text, "Done: ") || strings.Contains(text, `"requestId"`) || strings.Contains(text, `"observation"`) {
				t.Errorf("text %q", text)
			}
		})
	}
	if n := p.runs.Load(); n != 2 {
		t.Errorf("runs = %d, want 2", n)
	}
}

// A business failure is a tool result with isError and the stable code, in
// the text and in the structured content.
func TestBusinessFailureIsAToolError(t *testing.T) {
	_, s := inProcessSession(t)

	tests := []struct {
		name     string
		tool     string
		args     any
		code     perr.Code
		observed bool
	}{
		{"handler failed", "cart_clear", nil, perr.ExecutionFailed, true},
		{"bad params", "cart_add", map[string]any{"qty": 0}, perr.InvalidParams, false},
		// The tool list leaves out "additionalProperties": false; the
		// page still rejects an argument its schema does not name.
		{"unknown argument", "cart_add", map[string]any{"sku": "A1", "colour": "red"}, perr.InvalidParams, false},
		{"no such record", "approve__order", map[string]any{"record": "ord_404"}, perr.ActionNotFound, true},
		{"arguments not an object", "cart_add", []any{1}, perr.InvalidArgs, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, s, tt.tool, tt.args) // a business failure is no protocol error
			if !res.IsError {
				t.Fatalf("isError is false: %v", res.Content)
			}
			if text := res.Content[0].(*sdk.TextContent).Text; !strings.HasPrefix(text, string(tt.code)+": ") {
				t.Errorf("text %q does not start with the code %s", text, tt.code)
			}
			sc := jsontrees.RoundTrip(t, res.StructuredContent).(map[string]any)
			if got := sc["error"].(map[string]any)["code"]; got != string(tt.code) {
				t.Errorf("structured code %v, want %s", got, tt.code)
			}
			// What the client observed is there as the states, not as the
			// whole description.
			if _, ok := sc["states"]; ok != tt.observed {
				t.Errorf("states present %v, want %v (the client observes after %s): %v", ok, tt.observed, tt.code, sc)
			}
			if _, ok := sc["observed"]; ok {
				t.Errorf("the whole observed description is in the result: %v", sc)
			}
		})
	}
}

// A protocol failure is a JSON-RPC error whose data carries the Surface
// code.
func TestProtocolFailureIsAnRPCError(t *testing.T) {
	t.Run("RATE_LIMITED on call", func(t *testing.T) {
		p := newPage(t, runtime.WithLimiter(refuseInvokes{}))
		s := connect(t, plingmcp.NewBridge(agent.New(agent.InProcess(p.rt), agent.WithMaxRetryWait(0))))
		_, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "cart_view"})
		checkRPC(t, err, perr.RateLimited)
	})
	t.Run("SESSION_INVALID on list", func(t *testing.T) {
		verifier := runtime.SessionVerifierFunc(func(context.Context, string, int64) (schema.SurfaceSession, error) {
			return schema.SurfaceSession{}, perr.New(perr.SessionInvalid, "", nil)
		})
		p := newPage(t, runtime.WithSessions(verifier, true))
		s := connect(t, plingmcp.NewBridge(agent.New(agent.InProcess(p.rt), agent.WithSession("bad"))))
		_, err := s.ListTools(context.Background(), nil)
		checkRPC(t, err, perr.SessionInvalid)
	})
	t.Run("INTERNAL_ERROR on call: unconfirmed", func(t *testing.T) {
		p := newPage(t)
		inner := agent.InProcess(p.rt)
		tr := agent.TransportFunc(func(ctx context.Context, raw []byte) ([]byte, error) {
			resp, err := inner.RoundTrip(ctx, raw)
			var m struct{ ID, Method string }
			_ = json.Unmarshal(raw, &m)
			if m.Method == "invoke" {
				b, _ := schema.Encode(wire.FailureResponse(&m.ID, perr.New(perr.InternalError, "", nil)))
				return b, nil
			}
			return resp, err
		})
		s := connect(t, plingmcp.NewBridge(agent.New(tr)))
		// An unconfirmed call is a tool result a model reads, not a
		// JSON-RPC error: the code, "unknown", "do not call
		// it again".
		res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "cart_add", Arguments: map[string]any{"sku": "A"}})
		if err != nil {
			t.Fatalf("unconfirmed call: JSON-RPC error %v, want a tool result", err)
		}
		sc := jsontrees.RoundTrip(t, res.StructuredContent).(map[string]any)
		if txt := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.HasPrefix(txt, "INTERNAL_ERROR: whether cart.add ran is unknown") ||
			!strings.Contains(txt, "do not call it again") || sc["unconfirmed"] != true || sc["error"].(map[string]any)["code"] != "INTERNAL_ERROR" {
			t.Errorf("unconfirmed: %s %v", txt, sc)
		}
		if n := p.runs.Load(); n != 1 {
			t.Errorf("runs = %d, want 1 (never resent)", n)
		}
	})
}

// refuseInvokes is a limiter that refuses every invoke for a minute.
type refuseInvokes struct{}

func (refuseInvokes) Allow(_ context.Context, _ string, m schema.Method, _ int64) (bool, int64, error) {
	return m != schema.MethodInvoke, 60_000, nil
}

func checkRPC(t *testing.T, err error, code perr.Code) map[string]any {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("err = %v (%T), want a JSON-RPC error", err, err)
	}
	if we.Code != plingmcp.CodeSurfaceFailure {
		t.Errorf("JSON-RPC code %d, want %d", we.Code, plingmcp.CodeSurfaceFailure)
	}
	var data map[string]any
	if err := json.Unmarshal(we.Data, &data); err != nil {
		t.Fatalf("data %s: %v", we.Data, err)
	}
	if data["code"] != string(code) {
		t.Errorf("data.code = %v, want %s", data["code"], code)
	}
	return data
}

// A capability added to the page reaches the client as
// notifications/tools/list_changed, and the new tool is listed.
func TestListChanged(t *testing.T) {
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("an invoke changes the page, MCP "+stdcmp.Or(version, "newest"), func(t *testing.T) {
			p := newPage(t)
			var once sync.Once
			p.rt.DeclareAction(runtime.Action{ID: "wizard.open", Title: "Open the wizard", Run: func(context.Context, *runtime.Call) (any, error) {
				once.Do(func() {
					p.rt.DeclareAction(runtime.Action{ID: "wizard.next", Title: "Next step", Run: func(context.Context, *runtime.Call) (any, error) { return "next", nil }})
				})
				return "opened", nil
			}})
			s := connectVersion(t, plingmcp.NewBridge(agent.New(agent.InProcess(p.rt))), version)
			if names := s.toolNames(t); contains(names, "wizard_next") {
				t.Fatalf("wizard_next listed before it exists: %v", names)
			}
			res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "wizard_open"})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %v", err, res)
			}
			if sc := jsontrees.RoundTrip(t, res.StructuredContent).(map[string]any); sc["toolsChanged"] != true {
				t.Errorf("result %v does not report the change", sc)
			}
			s.waitChanged(t)
			if names := s.toolNames(t); !contains(names, "wizard_next") {
				t.Errorf("wizard_next not listed after the notification: %v", names)
			}
			res, err = s.CallTool(context.Background(), &sdk.CallToolParams{Name: "wizard_next"})
			if err != nil || res.IsError {
				t.Fatalf("call the new tool: %v %v", err, res)
			}
		})
	}
	t.Run("the page changes on its own: Refresh, then Watch", func(t *testing.T) {
		p := newPage(t)
		b := plingmcp.NewBridge(agent.New(agent.InProcess(p.rt)))
		s := connect(t, b)
		s.toolNames(t)

		h, _ := p.rt.DeclareAction(runtime.Action{ID: "coupon.apply", Title: "Apply coupon"})
		if changed, err := b.Refresh(context.Background()); err != nil || !changed {
			t.Fatalf("Refresh = %v, %v; want a change", changed, err)
		}
		s.waitChanged(t)
		if names := s.toolNames(t); !contains(names, "coupon_apply") {
			t.Errorf("coupon_apply not listed: %v", names)
		}

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go b.Watch(ctx, 10*time.Millisecond)
		h.Dispose()
		s.waitChanged(t)
		if names := s.toolNames(t); contains(names, "coupon_apply") {
			t.Errorf("coupon_apply still listed after it left: %v", names)
		}
	})
	t.Run("nothing changed: no describe after an invoke, no notification", func(t *testing.T) {
		// The SDK sends notifications/tools/list_changed, debounced, only
		// after the bridge adds or removes a tool, and the bridge does that
		// only in Refresh, which logs "tool list changed" before it
		// returns. So no such record proves no notification is coming,
		// without waiting for one; the marker below proves the record and
		// the notification do come with a change.
		p := newPage(t)
		tr := &counting{next: agent.InProcess(p.rt)}
		logs := &syncbuf.Buffer{}
		b := plingmcp.NewBridge(agent.New(tr), plingmcp.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
		s := connect(t, b)
		s.toolNames(t)
		const changedLog = "tool list changed"
		loaded := strings.Count(logs.String(), changedLog) // connect's first Refresh
		before := tr.describes.Load()
		if _, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "cart_view"}); err != nil {
			t.Fatal(err)
		}
		if n := tr.describes.Load() - before; n != 0 {
			t.Errorf("%d describes after an invoke that changed nothing, want 0", n)
		}
		if changed, err := b.Refresh(context.Background()); err != nil || changed {
			t.Errorf("Refresh = %v, %v; want no change", changed, err)
		}
		if n := strings.Count(logs.String(), changedLog) - loaded; n != 0 {
			t.Fatalf("the tool list changed %d times without a change: %s", n, logs.String())
		}
		if len(s.changed) != 0 {
			t.Errorf("a list_changed notification without a change")
		}

		p.rt.DeclareAction(runtime.Action{ID: "marker.only", Title: "Marker"})
		if changed, err := b.Refresh(context.Background()); err != nil || !changed {
			t.Fatalf("Refresh = %v, %v; want a change", changed, err)
		}
		if n := strings.Count(logs.String(), changedLog) - loaded; n != 1 {
			t.Errorf("%q logged %d times after one change, want 1: %s", changedLog, n, logs.String())
		}
		s.waitChanged(t)
		if names := s.toolNames(t); !contains(names, "marker_only") {
			t.Errorf("marker_only not listed: %v", names)
		}
	})
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// The bridge names tools exactly as modeltool.List does, also when names
// collide with each other, with the numeric suffixes, or at 64 chars.
func TestToolNamesMatchRuntimeTools(t *testing.T) {
	x63, a64 := strings.Repeat("x", 63), strings.Repeat("a", 64)
	for _, tt := range []struct {
		name string
		ids  []string
		want []string // "tool name → capability", in capability order
	}{
		{"a suffixed name is a real one", []string{"a.b", "a_b", "a_b_2"},
			[]string{"a_b → a.b", "a_b_2 → a_b", "a_b_2_2 → a_b_2"}},
		{"64-char ids that collide", []string{x63 + ".", x63 + "_"},
			[]string{x63 + "_ → " + x63 + ".", x63[:62] + "_2 → " + x63 + "_"}},
		{"long ids that share 64 chars", []string{a64 + "1", a64 + "2"},
			[]string{a64 + " → " + a64 + "1", a64[:62] + "_2 → " + a64 + "2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := runtime.New(runtime.WithExpose("*"))
			for _, id := range tt.ids {
				if _, err := rt.DeclareAction(runtime.Action{ID: id, Title: id}); err != nil {
					t.Fatal(err)
				}
			}
			d, err := agent.New(agent.InProcess(rt)).Describe(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			tools, err := plingmcp.Tools(d)
			if err != nil {
				t.Fatal(err)
			}
			want, err := modeltool.List(rt, context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			var got, exp []string
			for _, tl := range tools {
				got = append(got, tl.Tool.Name+" → "+tl.Capability)
			}
			for _, tl := range want {
				exp = append(exp, tl.Name+" → "+tl.Capability)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MCP tool names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, exp); diff != "" {
				t.Errorf("modeltool.List names (-want +got):\n%s", diff)
			}
		})
	}
}
