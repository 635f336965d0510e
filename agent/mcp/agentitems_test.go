package mcp_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/testing/jsontrees"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// What the agent side tells a model, each on a small page of its
// own (in process; the browsing ones are in browsing_test.go and the help
// desk's task suite).

func declarer(t *testing.T) func(*runtime.Handle, error) {
	return func(_ *runtime.Handle, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// bookingRuntime is a page whose booking.step state reads step, which
// the test's handlers move on.
func bookingRuntime(t *testing.T) (*runtime.Runtime, *atomic.Int64) {
	t.Helper()
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	step := new(atomic.Int64)
	if _, err := rt.DeclareState(runtime.State{Key: "booking.step", Read: func(context.Context) (any, error) { return step.Load(), nil }}); err != nil {
		t.Fatal(err)
	}
	return rt, step
}

func callText(t *testing.T, s *session, name string, args map[string]any) (*sdk.CallToolResult, string) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res, res.Content[0].(*sdk.TextContent).Text
}

// A capability that cannot run now is listed, saying why, and a
// call answers ACTION_UNAVAILABLE with the page's reason — not the
// JSON-RPC "unknown tool" that tells a model the site cannot do it.
func TestUnavailableToolIsListedAndAnswersWhy(t *testing.T) {
	declare := declarer(t)
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	declare(rt.DeclareAction(runtime.Action{ID: "invoice.send", Title: "Send the invoice", Risk: "destructive", Approval: true,
		Available: func(context.Context, string) runtime.Availability {
			return runtime.Unavailable("Add a customer first")
		},
		Run: func(context.Context, *runtime.Call) (any, error) { return "sent", nil }}))
	s := connectRuntime(t, rt)
	res := s.listTools(t)
	var desc []string
	for _, tl := range res.Tools {
		desc = append(desc, tl.Name+": "+tl.Description)
	}
	// Listed as it would be when available (its words, its hints, who is
	// asked), with why it cannot run now.
	want := []string{"invoice_send: From the page: \"Send the invoice\". Unavailable when listed (the page's reason: \"Add a customer first\"). A person approves each call in the browser: it waits for them (minutes), and fails if they refuse."}
	if diff := cmp.Diff(want, desc); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	destructive := true
	if diff := cmp.Diff(&sdk.ToolAnnotations{DestructiveHint: &destructive}, res.Tools[0].Annotations); diff != "" {
		t.Errorf("annotations of the unavailable tool (-want +got):\n%s", diff)
	}
	got, txt := callText(t, s, "invoice_send", nil)
	if !got.IsError || !strings.HasPrefix(txt, `ACTION_UNAVAILABLE: From the page: "Add a customer first".`) || strings.Contains(txt, "gate") {
		t.Errorf("call of an unavailable tool: %s", txt)
	}
}

// While the page's capabilities only change availability, the
// list stays as it was (no tools/list_changed); the result says what
// became unavailable or available, with the reason.
func TestAvailabilityChangesKeepTheList(t *testing.T) {
	declare := declarer(t)
	rt, step := bookingRuntime(t)
	at := func(n int64, reason string) func(context.Context, string) runtime.Availability {
		return func(context.Context, string) runtime.Availability {
			if step.Load() == n {
				return runtime.Available
			}
			return runtime.Unavailable(reason)
		}
	}
	declare(rt.DeclareAction(runtime.Action{ID: "booking.pick", Title: "Pick a slot", Available: at(0, "A slot is picked already"),
		Params: map[string]runtime.Param{"slot": {Type: "string", Required: true}},
		Run:    func(context.Context, *runtime.Call) (any, error) { step.Store(1); return nil, nil }}))
	declare(rt.DeclareAction(runtime.Action{ID: "booking.confirm", Title: "Confirm the booking", Available: at(1, "Pick a slot first"),
		Run: func(context.Context, *runtime.Call) (any, error) { step.Store(2); return "booked", nil }}))
	s := connectRuntime(t, rt)
	first := s.toolNames(t)

	_, txt := callText(t, s, "booking_pick", map[string]any{"slot": "10:00"})
	for _, want := range []string{"Now unavailable: booking.pick (the page's reason: \"A slot is picked already\")", "Now available: booking.confirm"} {
		if !strings.Contains(txt, want) {
			t.Errorf("pick result lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(txt, "Confirm the booking") {
		t.Errorf("pick result repeats the description the list has:\n%s", txt)
	}
	if got, txt := callText(t, s, "booking_confirm", nil); got.IsError {
		t.Fatalf("confirm: %s", txt)
	}
	select {
	case <-s.changed:
		t.Error("tools/list_changed sent although only availability changed")
	case <-time.After(200 * time.Millisecond):
	}
	if diff := cmp.Diff(first, s.toolNames(t)); diff != "" {
		t.Errorf("tool list changed (-first +now):\n%s", diff)
	}
}

// EXPECTATION_FAILED carries the page's own words (its role=alert)
// in the text a model reads, not only in structuredContent.
func TestExpectationFailedTextHasThePagesFeedback(t *testing.T) {
	declare := declarer(t)
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithPage(func(context.Context) (schema.PageInfo, []schema.Feedback) {
		return schema.PageInfo{}, []schema.Feedback{{Level: "error", Message: "Board name is too short."}}
	}))
	declare(rt.DeclareState(runtime.State{Key: "boards.count", Read: func(context.Context) (any, error) { return 0, nil }}))
	declare(rt.DeclareAction(runtime.Action{ID: "board.create", Title: "Create a board",
		Run:    func(context.Context, *runtime.Call) (any, error) { return nil, nil },
		Expect: &runtime.Expectation{State: "boards.count", Change: "increase", TimeoutMs: 50}}))
	s := connectRuntime(t, rt)
	got, txt := callText(t, s, "board_create", nil)
	if !got.IsError || !strings.HasPrefix(txt, "EXPECTATION_FAILED: ") || !strings.Contains(txt, `The page says (error): "Board name is too short."`) {
		t.Errorf("expectation failure text:\n%s", txt)
	}
}

// An example names one row (a label that many rows share
// names none); an unknown record says it is unknown, not "describe
// again"; a handler that ran but whose value cannot be sent says not to
// repeat it; the instructions do not give the demo's label.
func TestMessagesSayWhatHappenedAndTheNextStep(t *testing.T) {
	declare := declarer(t)
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	declare(rt.DeclareRecords(runtime.Records{Kind: "task", Read: func(context.Context) ([]runtime.RecordItem, error) {
		return []runtime.RecordItem{{ID: "t1", Label: "Task"}, {ID: "t2", Label: "Task"}, {ID: "t3", Label: "Task Water the plants"}}, nil
	}}))
	var ran atomic.Int64
	declare(rt.DeclareAction(runtime.Action{ID: "done", Title: "Mark done", Record: &runtime.RecordRef{Kind: "task"},
		Run: func(_ context.Context, c *runtime.Call) (any, error) { ran.Add(1); return c.Record, nil }}))
	declare(rt.DeclareAction(runtime.Action{ID: "stats", Title: "Stats", Risk: schema.RiskRead,
		Run: func(context.Context, *runtime.Call) (any, error) { ran.Add(1); return math.Inf(1), nil }}))
	b := runtimeBridge(rt)
	s := connect(t, b)
	if strings.Contains(plingmcp.Instructions, "#1250") {
		t.Errorf("instructions give the demo's label: %s", plingmcp.Instructions)
	}
	res := s.listTools(t)
	for _, tl := range res.Tools {
		if tl.Name != "done__task" {
			continue
		}
		if d := jsontrees.RoundTrip(t, tl.InputSchema).(map[string]any)["properties"].(map[string]any)["record"].(map[string]any)["description"].(string); !strings.Contains(d, `e.g. "t3" or "Task Water the plants"`) {
			t.Errorf("record example does not name one row: %s", d)
		}
	}

	_, txt := callText(t, s, "done__task", map[string]any{"record": "Nope"})
	if !strings.Contains(txt, `No task has the id or label "Nope".`) || strings.Contains(txt, "describe again") {
		t.Errorf("unknown record: %s", txt)
	}
	_, txt = callText(t, s, "done__task", map[string]any{"record": "Task"})
	if !strings.Contains(txt, `2 tasks match "Task"`) {
		t.Errorf("ambiguous label: %s", txt)
	}
	if _, txt = callText(t, s, "done__task", map[string]any{"record": "Task Water the plants"}); !strings.Contains(txt, "Done: done@task on t3") {
		t.Errorf("whole label: %s", txt)
	}

	before := ran.Load()
	_, txt = callText(t, s, "stats", nil)
	if ran.Load() != before+1 || !strings.Contains(txt, "The action ran and its effect happened") || !strings.Contains(txt, "Do not call it again") ||
		strings.Contains(txt, "The handler failed") {
		t.Errorf("a value that cannot be sent: %s", txt)
	}
	if strings.Contains(txt, "gate") {
		t.Errorf("jargon: %s", txt)
	}
}

// On the agent's side, a handler that never finishes ends the call
// as a tool result with the Surface code in structuredContent, saying the
// effect is unknown — not a JSON-RPC -32001, which an SDK also uses for
// its own timeout. (The page's own deadline is the runtime's.)
func TestHandlerThatNeverFinishes(t *testing.T) {
	declare := declarer(t)
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	declare(rt.DeclareAction(runtime.Action{ID: "report.build", Title: "Build the report",
		Run: func(context.Context, *runtime.Call) (any, error) { <-never; return nil, nil }}))
	inner := agent.InProcess(rt)
	// The transport's bound: the answer never comes within it.
	tr := agent.TransportFunc(func(ctx context.Context, raw []byte) ([]byte, error) {
		if strings.Contains(string(raw), `"invoke"`) {
			// As the browser's transport does: it stops waiting for the
			// page's answer at its bound.
			ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			go inner.RoundTrip(context.WithoutCancel(ctx), raw)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return inner.RoundTrip(ctx, raw)
	})
	s := connect(t, plingmcp.NewBridge(agent.New(tr)))
	res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "report_build"})
	if err != nil {
		t.Fatalf("JSON-RPC error %v, want a tool result", err)
	}
	sc := jsontrees.RoundTrip(t, res.StructuredContent).(map[string]any)
	txt := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || sc["error"].(map[string]any)["code"] == nil || !strings.Contains(txt, "whether report.build ran is unknown") ||
		!strings.Contains(txt, "do not call it again") {
		t.Errorf("a handler that never finishes: %s %v", txt, sc)
	}
}

// The page's own deadline answers with a failure that says the handler
// did not finish: its next step is to look, not to fix an input.
func TestPageDeadlineSaysLookDoNotRepeat(t *testing.T) {
	declare := declarer(t)
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	declare(rt.DeclareAction(runtime.Action{ID: "report.build", Title: "Build the report",
		Run: func(context.Context, *runtime.Call) (any, error) {
			return nil, errors.New("The handler did not finish within 5000 ms; its effect is unknown")
		}}))
	s := connectRuntime(t, rt)
	_, txt := callText(t, s, "report_build", nil)
	if !strings.Contains(txt, "Do not call it again") || strings.Contains(txt, "fix what it names") {
		t.Errorf("page deadline: %s", txt)
	}
}

// A tool that waits for a person says so in its description.
func TestToolsThatWaitForAPersonSaySo(t *testing.T) {
	d := &schema.SurfaceDescription{Capabilities: []schema.SurfaceCapability{
		{ID: "refund", Title: "Refund the order", Risk: schema.RiskDestructive, Approval: true, InputSchema: schema.JSONSchema{Type: "object"}},
		{ID: "pay", Title: "Pay", Handoff: true, Risk: schema.RiskWrite, InputSchema: schema.JSONSchema{Type: "object"}},
		{ID: "view", Title: "View", Risk: schema.RiskRead, InputSchema: schema.JSONSchema{Type: "object"}},
	}}
	tools, err := plingmcp.Tools(d)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range tools {
		got = append(got, tl.Tool.Description)
	}
	want := []string{
		`From the page: "Refund the order". A person approves each call in the browser: it waits for them (minutes), and fails if they refuse.`,
		`From the page: "Pay". A person finishes it in the browser: it waits for them (minutes).`,
		`From the page: "View"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("descriptions (-want +got):\n%s", diff)
	}
}

// A tool first listed while its capability
// cannot run carries its real input schema (a row action's "record"
// first), so when it becomes available the list stays as it was (no
// tools/list_changed), the result does not repeat the parameters, and a
// call with them runs.
func TestToolListedUnavailableHasItsSchema(t *testing.T) {
	declare := declarer(t)
	rt, step := bookingRuntime(t)
	declare(rt.DeclareRecords(runtime.Records{Kind: "slot", Read: func(context.Context) ([]runtime.RecordItem, error) {
		return []runtime.RecordItem{{ID: "s1", Label: "10:00"}}, nil
	}}))
	later := func(context.Context, string) runtime.Availability {
		if step.Load() == 1 {
			return runtime.Available
		}
		return runtime.Unavailable("Start a booking first")
	}
	declare(rt.DeclareAction(runtime.Action{ID: "booking.start", Title: "Start a booking",
		Run: func(context.Context, *runtime.Call) (any, error) { step.Store(1); return nil, nil }}))
	declare(rt.DeclareAction(runtime.Action{ID: "booking.pay", Title: "Pay the deposit", Available: later,
		Params: map[string]runtime.Param{"amount": {Type: "number", Required: true}},
		Run:    func(context.Context, *runtime.Call) (any, error) { return "paid", nil }}))
	declare(rt.DeclareAction(runtime.Action{ID: "hold", Title: "Hold a slot", Available: later, Record: &runtime.RecordRef{Kind: "slot"},
		Params: map[string]runtime.Param{"note": {Type: "string"}},
		Run:    func(context.Context, *runtime.Call) (any, error) { return "held", nil }}))
	s := connectRuntime(t, rt)
	res := s.listTools(t)
	hold := modeltool.Names([]string{"hold@slot"})[0]
	got := map[string]any{}
	for _, tl := range res.Tools {
		got[tl.Name] = jsontrees.RoundTrip(t, tl.InputSchema)
	}
	want := map[string]any{
		"booking_start": map[string]any{"type": "object"},
		"booking_pay":   map[string]any{"type": "object", "properties": map[string]any{"amount": map[string]any{"type": "number"}}, "required": []any{"amount"}},
		hold: map[string]any{"type": "object", "properties": map[string]any{"note": map[string]any{"type": "string"},
			"record": map[string]any{"type": "string", "description": "The slot's id or label"}}, "required": []any{"record"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("input schemas of the tools listed while unavailable (-want +got):\n%s", diff)
	}

	_, txt := callText(t, s, "booking_start", nil)
	if !strings.Contains(txt, "Now available: booking.pay;") || strings.Contains(txt, "Parameters:") || strings.Contains(txt, "Pay the deposit") {
		t.Errorf("start result: the description and parameters are in the list already, the result need not repeat them:\n%s", txt)
	}
	if r, txt := callText(t, s, "booking_pay", map[string]any{"amount": 20}); r.IsError || !strings.Contains(txt, "paid") {
		t.Errorf("pay: %s", txt)
	}
	if r, txt := callText(t, s, hold, map[string]any{"record": "s1"}); r.IsError || !strings.Contains(txt, "held") {
		t.Errorf("hold: %s", txt)
	}
	select {
	case <-s.changed:
		t.Error("tools/list_changed sent although only availability changed")
	case <-time.After(200 * time.Millisecond):
	}
}
