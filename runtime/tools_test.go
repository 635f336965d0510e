package runtime

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/schema"
)

var toolNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestTools(t *testing.T) {
	e := newEnv(t, WithExpose("cart.*", "approve@order", "hidden.*"), WithSessions(sessions(map[string]schema.SurfaceSession{
		"cart": {Subject: "a", Scope: []string{"cart.*"}, ExpiresAtMs: 1 << 40},
	}), false), WithAnonymous("*"))
	orderRecords(t, e.rt, 2)
	mustDeclare(t, e.rt, Action{ID: "cart.add", Title: "Add to cart", Description: "Adds one item",
		Params: map[string]Param{"sku": {Type: "string", Required: true}}})
	mustDeclare(t, e.rt, Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"},
		Params: map[string]Param{"note": {Type: "string", Required: true}}})
	mustDeclare(t, e.rt, Action{ID: "cart.closed", Title: "Closed", Available: func(context.Context, string) Availability { return Unavailable("no") }})
	mustDeclare(t, e.rt, Action{ID: "admin.wipe", Title: "Wipe"}) // not exposed by the site

	tools, err := e.rt.tools(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	f := false
	want := []modeltool.Tool{
		{Name: "approve__order", Title: "Approve", Description: "Approve. Only orders in view (else ACTION_UNAVAILABLE: scroll or filter the page first)", Capability: "approve@order", Parameters: schema.JSONSchema{
			Type: "object", AdditionalProperties: &f, Required: []string{"record", "note"},
			Properties: map[string]*schema.PropertySchema{"note": {Type: "string"},
				"record": {Type: "string", Description: "The order record to act on: its id, or its label as people read it (the whole label or its first word)"}}}},
		{Name: "cart_add", Title: "Add to cart", Description: "Add to cart. Adds one item", Capability: "cart.add", Parameters: schema.JSONSchema{
			Type: "object", AdditionalProperties: &f, Required: []string{"sku"},
			Properties: map[string]*schema.PropertySchema{"sku": {Type: "string"}}}},
	}
	if diff := cmp.Diff(want, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	for _, tl := range tools {
		if !toolNameRe.MatchString(tl.Name) {
			t.Errorf("tool name %q", tl.Name)
		}
	}
	scoped, err := e.rt.tools(context.Background(), "cart")
	if err != nil || len(scoped) != 1 || scoped[0].Capability != "cart.add" {
		t.Errorf("session-scoped tools = %+v, %v", scoped, err)
	}
	if _, err := e.rt.tools(context.Background(), "bad"); perrCode(t, err) != perr.SessionInvalid {
		t.Errorf("a bad session gets tools: %v", err)
	}
}

// Every tool name is valid for model APIs and unique, whatever the ids.
func TestToolNamesValidAndUnique(t *testing.T) {
	tests := []struct {
		name string
		ids  []string
	}{
		{"'.' and '_' collide", []string{"a.b", "a_b"}},
		{"a suffixed name collides with a real one", []string{"a.b", "a_b", "a_b_2"}},
		{"'@' and '__' collide", []string{"x__y", "x.y.z"}},
		{"long ids that share 64 chars", []string{strings.Repeat("a", 64) + "1", strings.Repeat("a", 64) + "2", strings.Repeat("a", 64) + "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for _, id := range tt.ids {
				mustDeclare(t, e.rt, Action{ID: id, Title: id})
			}
			tools, err := e.rt.tools(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]string{}
			for _, tl := range tools {
				if !toolNameRe.MatchString(tl.Name) {
					t.Errorf("BUG: tools.go Tools: name %q (%d chars) for %s is not ^[A-Za-z0-9_-]{1,64}$: the collision suffix is added after ToolName cut the name to 64",
						tl.Name, len(tl.Name), tl.Capability)
				}
				if other, dup := seen[tl.Name]; dup {
					t.Errorf("BUG: tools.go Tools: %s and %s share the tool name %q: the collision suffix is not checked against the names already used",
						other, tl.Capability, tl.Name)
				}
				seen[tl.Name] = tl.Capability
			}
			// Each tool calls its own capability.
			for _, tl := range tools {
				resp := decodeResponse(t, e.rt.callTool(context.Background(), "", tl.Name, "{}"))
				res := invokeResult(t, resp)
				if res.Evidence == nil || res.Evidence.Capability != tl.Capability {
					t.Errorf("tool %q is listed for %s but called %+v", tl.Name, tl.Capability, res)
				}
			}
		})
	}
}

func TestCallTool(t *testing.T) {
	e := newEnv(t)
	var ran atomic.Int64
	var got map[string]any
	mustDeclare(t, e.rt, Action{ID: "cart.add", Title: "Add", Params: map[string]Param{"sku": {Type: "string"}, "qty": {Type: "integer"}},
		Run: func(_ context.Context, c *Call) (any, error) { ran.Add(1); got = c.Input; return "added", nil }})
	mustDeclare(t, e.rt, Action{ID: "noop", Title: "Noop", Run: counter(&ran, nil)})

	invalid := []struct{ name, args string }{
		{"not JSON", "not json"},
		{"an array", "[1]"},
		{"null", "null"},
		{"a string", `"x"`},
		{"a number", "1"},
		{"trailing text", `{"a":1} extra`},
		{"two objects", `{} {}`},
		{"a trailing brace", `{}}`},
		{"a trailing bracket", `{}]`},
		{"truncated", `{"sku":`},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			before := ran.Load()
			out := e.rt.callTool(context.Background(), "", "noop", tt.args)
			resp := decodeResponse(t, out)
			if !resp.OK {
				t.Fatalf("a bad argument text is a protocol failure: %s", out)
			}
			res := invokeResult(t, resp)
			if res.Error == nil || res.Error.Code != string(perr.InvalidArgs) {
				msg := ""
				if strings.HasPrefix(tt.name, "a trailing") {
					msg = "BUG: tools.go CallTool: json.Decoder.More() is false before a '}' or ']', so trailing text starting with one is accepted; check dec.Token() == io.EOF instead. "
				}
				t.Errorf("%sresult = %s, want INVALID_ARGS", msg, out)
			}
			if ran.Load() != before {
				t.Errorf("the handler ran on invalid arguments")
			}
			if !strings.HasPrefix(*resp.ID, "tool_") {
				t.Errorf("id = %q", *resp.ID)
			}
		})
	}

	out := e.rt.callTool(context.Background(), "", "cart_add", ` {"sku":"A1","qty":2} `)
	if res := invokeResult(t, decodeResponse(t, out)); res.Error != nil || res.Value != "added" {
		t.Fatalf("valid call: %s", out)
	}
	if diff := cmp.Diff(map[string]any{"sku": "A1", "qty": num("2")}, got); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	// Empty arguments are an empty object.
	if res := invokeResult(t, decodeResponse(t, e.rt.callTool(context.Background(), "", "noop", "  "))); res.Error != nil {
		t.Errorf("empty arguments: %+v", res.Error)
	}
	// Arguments that are an object but break the schema are INVALID_PARAMS.
	if res := invokeResult(t, decodeResponse(t, e.rt.callTool(context.Background(), "", "cart_add", `{"qty":"x"}`))); res.Error == nil || res.Error.Code != string(perr.InvalidParams) {
		t.Errorf("schema violation: %+v", res.Error)
	}
	// An unknown tool goes through the gate and the executor.
	if resp := decodeResponse(t, e.rt.callTool(context.Background(), "", "nope", "{}")); outcome(t, resp) != string(perr.ActionNotFound) {
		t.Errorf("unknown tool: %s", outcome(t, resp))
	}
	// Every call has a fresh id: the same call twice runs twice.
	before := ran.Load()
	e.rt.callTool(context.Background(), "", "noop", "{}")
	e.rt.callTool(context.Background(), "", "noop", "{}")
	if ran.Load() != before+2 {
		t.Errorf("two tool calls ran %d times", ran.Load()-before)
	}
	// A failing random source: INTERNAL_ERROR, nothing runs.
	e2 := newEnv(t, WithRandom(strings.NewReader("")))
	if got := outcome(t, decodeResponse(t, e2.rt.callTool(context.Background(), "", "noop", "{}"))); got != "protocol:INTERNAL_ERROR" {
		t.Errorf("no randomness: %s", got)
	}
}

// A folded tool takes record like any argument.
func TestCallToolFolded(t *testing.T) {
	e := newEnv(t)
	orderRecords(t, e.rt, 2)
	mustDeclare(t, e.rt, Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"},
		Run: func(_ context.Context, c *Call) (any, error) { return c.Record, nil }})
	out := e.rt.callTool(context.Background(), "", "approve__order", `{"record":"ord_2"}`)
	if res := invokeResult(t, decodeResponse(t, out)); res.Value != "ord_2" {
		t.Errorf("folded tool call: %s", out)
	}
	out = e.rt.callTool(context.Background(), "", "approve__order", `{}`)
	if res := invokeResult(t, decodeResponse(t, out)); res.Error == nil || res.Error.Code != string(perr.InvalidParams) {
		t.Errorf("no record: %s", out)
	}
}

// A tool's annotations and wait come from its declaration: read is
// read-only (its result carries page data: untrusted content), destructive
// or approval is consequential, and a tool that asks a person says how
// long it may wait.
func TestToolAnnotations(t *testing.T) {
	tests := []struct {
		name    string
		act     Action
		want    modeltool.Annotations
		waitsMs int64
		descHas string
	}{
		{"read", Action{ID: "a", Title: "A", Risk: schema.RiskRead}, modeltool.Annotations{ReadOnlyHint: true, UntrustedContentHint: true}, 0, ""},
		{"write", Action{ID: "a", Title: "A"}, modeltool.Annotations{}, 0, ""},
		{"destructive", Action{ID: "a", Title: "A", Risk: schema.RiskDestructive}, modeltool.Annotations{ConsequentialHint: true}, 0, ""},
		{"approval", Action{ID: "a", Title: "A", Approval: true}, modeltool.Annotations{ConsequentialHint: true}, 45_000,
			"A person on the page must approve each call; the call waits for them up to 45 seconds"},
		{"handoff", Action{ID: "a", Title: "A", Handoff: &Handoff{Prompt: "p", TimeoutMs: 90_000}}, modeltool.Annotations{}, 90_000,
			"A person finishes it on the page; the call waits for them up to 90 seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := onlyTool(t, tt.act)
			if diff := cmp.Diff(tt.want, tool.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if tool.WaitsMs != tt.waitsMs || !strings.Contains(tool.Description, tt.descHas) {
				t.Errorf("waitsMs %d, description %q; want %d and %q", tool.WaitsMs, tool.Description, tt.waitsMs, tt.descHas)
			}
		})
	}
}

// A tool's description joins the page's sentences and the runtime's with
// ". ", but only a space after one that already ends (no "it.. Only").
func TestToolDescriptionSentences(t *testing.T) {
	tests := []struct {
		name string
		act  Action
		want string
	}{
		{"plain", Action{ID: "a", Title: "Add", Description: "Adds one"}, "Add. Adds one"},
		{"description-ends", Action{ID: "a", Title: "Approve order", Description: "Ships it.", Record: &RecordRef{Kind: "order"}, Approval: true},
			"Approve order. Ships it. Only orders in view (else ACTION_UNAVAILABLE: scroll or filter the page first). A person on the page must approve each call; the call waits for them up to 45 seconds"},
		{"title-ends", Action{ID: "a", Title: "Sure?", Description: "Asks once"}, "Sure? Asks once"},
		{"cjk", Action{ID: "a", Title: "退款。", Approval: true}, "退款。 A person on the page must approve each call; the call waits for them up to 45 seconds"},
		// A title taken from the description's first sentence (a WebMCP
		// declarative form's tooldescription) is not said twice.
		{"title-is-first-sentence", Action{ID: "a", Title: "Search the tickets", Description: "Search the tickets. Returns the matching ids"},
			"Search the tickets. Returns the matching ids"},
		{"title-is-the-description", Action{ID: "a", Title: "Book a class", Description: "Book a class"}, "Book a class"},
		{"title-is-only-a-prefix", Action{ID: "a", Title: "Close", Description: "Closes the ticket"}, "Close. Closes the ticket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, onlyTool(t, tt.act).Description); diff != "" {
				t.Errorf("description (-want +got):\n%s", diff)
			}
		})
	}
}

// onlyTool declares act (with a handler) on a runtime open to anonymous
// callers and returns its one tool.
func onlyTool(t *testing.T, act Action) modeltool.Tool {
	t.Helper()
	e := newEnv(t, WithAnonymous("*"))
	act.Run = func(context.Context, *Call) (any, error) { return nil, nil }
	mustDeclare(t, e.rt, act)
	tools, err := e.rt.tools(context.Background(), "")
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %+v, %v", tools, err)
	}
	return tools[0]
}

// An approval tool of the mirror says the wait a mirrored call has: the
// shorter of the approval's lifetime and the mirror's window, which is the
// window js-shim/webmcp.js gives each call.
func TestToolApprovalWaitIsTheMirrorWindow(t *testing.T) {
	src, err := os.ReadFile("../js-shim/webmcp.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`var WINDOW_MS = (\d+);`).FindSubmatch(src)
	if m == nil || string(m[1]) != strconv.Itoa(mirrorWindowMs) {
		t.Fatalf("webmcp.js WINDOW_MS %q; the runtime says %d", m, mirrorWindowMs)
	}
	tests := []struct {
		name    string
		ttl     time.Duration
		waitsMs int64
		descHas string
	}{
		{"default lifetime", 0, 45_000, "up to 45 seconds"},
		{"shorter lifetime", 30 * time.Second, 30_000, "up to 30 seconds"},
		{"longer lifetime", 10 * time.Minute, 45_000, "up to 45 seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, WithAnonymous("*"), WithApprover(nil, tt.ttl))
			mustDeclare(t, e.rt, Action{ID: "a", Title: "A", Approval: true, Run: func(context.Context, *Call) (any, error) { return nil, nil }})
			tools, err := e.rt.tools(context.Background(), "")
			if err != nil || len(tools) != 1 {
				t.Fatalf("tools %+v, %v", tools, err)
			}
			if tools[0].WaitsMs != tt.waitsMs || !strings.Contains(tools[0].Description, tt.descHas) {
				t.Errorf("waitsMs %d, description %q; want %d and %q", tools[0].WaitsMs, tools[0].Description, tt.waitsMs, tt.descHas)
			}
		})
	}
}

// TestModelToolRegistered: the module and the MCP bridge reach the tool
// list and the tool call through internal/modeltool, which runtime's init
// fills; a missing or mistyped registration panics there.
func TestModelToolRegistered(t *testing.T) {
	e := newEnv(t, WithAnonymous("*"))
	mustDeclare(t, e.rt, Action{ID: "cart.add", Title: "Add", Run: func(context.Context, *Call) (any, error) { return "added", nil }})
	tools, err := modeltool.List(e.rt, context.Background(), "")
	if err != nil || len(tools) != 1 || tools[0].Name != "cart_add" {
		t.Fatalf("modeltool.List = %+v, %v; want the one tool cart_add", tools, err)
	}
	if res := invokeResult(t, decodeResponse(t, modeltool.Call(e.rt, context.Background(), "", "cart_add", "{}"))); res.Error != nil {
		t.Fatalf("modeltool.Call: %+v", res.Error)
	}
}
