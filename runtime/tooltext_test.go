package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/pagebridge"
)

// A tool result's text is short and code first: what happened, the proof,
// what changed and the next step; a failure gives the catalog's next step.
func TestToolText(t *testing.T) {
	e := newEnv(t)
	count := newVar(0)
	if _, err := e.rt.DeclareState(count.state("cart.count")); err != nil {
		t.Fatal(err)
	}
	mustDeclare(t, e.rt, Action{ID: "cart.add", Title: "Add",
		Run:    func(context.Context, *Call) (any, error) { count.add(3); return "added", nil },
		Expect: &Expectation{State: "cart.count", Change: "increase"}})
	mustDeclare(t, e.rt, Action{ID: "ship", Title: "Ship", Params: map[string]Param{"n": {Type: "integer"}},
		Run: func(_ context.Context, c *Call) (any, error) {
			return nil, perr.New(perr.InvalidParams, "The postcode is not one we ship to", nil)
		}})
	mustDeclare(t, e.rt, Action{ID: "join", Title: "Join", Params: map[string]Param{"email": {Type: "string"}},
		Run: func(context.Context, *Call) (any, error) {
			return nil, formRefused([]pagebridge.FormField{{Name: "email", Message: "That address is taken"}})
		}})
	mustDeclare(t, e.rt, Action{ID: "pay", Title: "Pay",
		Run: func(context.Context, *Call) (any, error) { return nil, errors.New("the card was declined") }})
	if _, err := e.rt.DeclareRecords(Records{Kind: "ticket", Read: func(context.Context) ([]RecordItem, error) {
		return []RecordItem{{ID: "t1", Label: "T-0847 Printer jams"}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	mustDeclare(t, e.rt, Action{ID: "close", Title: "Close ticket", Record: &RecordRef{Kind: "ticket"},
		Run: func(context.Context, *Call) (any, error) { return nil, nil }})
	schemaEntry, _ := perr.Lookup(perr.InvalidParams)

	tests := []struct {
		name       string
		capability string
		input      map[string]any
		want       []string // the lines, in order
	}{
		{"success", "cart.add", nil, []string{
			"OK: cart.add ran.",
			"Proof: cart.count increase met (0 → 3)",
			`Value: "added"`,
			"Changed: cart.count",
		}},
		// A WebMCP consumer has no describe: it lists tools.
		{"no such tool", "nope", nil, []string{
			"ACTION_NOT_FOUND: The current page has no such action. Next: The page has no such tool now; list its tools again.",
		}},
		// The tool is there; the record is not.
		{"no such record", "close@ticket", map[string]any{"record": "T-9999"}, []string{
			"ACTION_NOT_FOUND: No such record for this action (by id or label). Next: No record of this kind has that id or label: pass the id or the whole label of one the page shows (Details has an example), then call again.",
			`Details: {"example":{"id":"t1","label":"T-0847 Printer jams"},"kind":"ticket"}`,
		}},
		// The page refused values the schema allowed: its message says
		// what to correct, not the schema.
		{"the page refuses the values", "ship", map[string]any{"n": 1}, []string{
			"INVALID_PARAMS: The postcode is not one we ship to. Next: The page refused these values: correct them as its message says, then call again.",
		}},
		// The page's form named the field (its constraints, its
		// submit handler's setCustomValidity): the values matched the
		// schema.
		{"the page's form names the field", "join", map[string]any{"email": "bo@taken.example"}, []string{
			"INVALID_PARAMS: The page's form did not accept the input. Next: The page refused these values: correct them as its message says, then call again.",
			`Details: {"violations":[{"path":"/email","reason":"is not valid: the page says \"That address is taken\""}]}`,
		}},
		{"the schema refuses the values", "ship", map[string]any{"n": "one"}, []string{
			"INVALID_PARAMS: The arguments do not satisfy the schema. Next: " + schemaEntry.Action.En,
			`Details: {"violations":[{"path":"/n","reason":"must be a number"}]}`,
		}},
		{"the page's code stops", "pay", nil, []string{
			"EXECUTION_FAILED: the card was declined. Next: The page's code stopped with this message: read it, fix what it names (often a value), then decide whether to call again.",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := tt.input
			if input == nil {
				input = map[string]any{}
			}
			_, raw := e.send(e.invokeReq(tt.capability, input))
			got := strings.Split(modeltool.Text(raw), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
	if got := modeltool.Text([]byte(`{"ok":false,"error":{"code":"BAD_REQUEST","message":"no"}}`)); !strings.HasPrefix(got, "BAD_REQUEST: no.") {
		t.Errorf("protocol failure text %q", got)
	}
	if got := modeltool.Text([]byte(`{`)); !strings.HasPrefix(got, "INTERNAL_ERROR") {
		t.Errorf("unreadable answer text %q", got)
	}
}

// What a WebMCP consumer reads of a result and of the tool list carries
// no character it cannot see: the page's value, feedback, title and
// description are its users' text as much as its own; a value passed
// raw fails it.
func TestToolTextEscapesHidden(t *testing.T) {
	const hostile = "ok\u200b\u202eevil\u202c\U000E0041\x1b[2K"
	const escaped = `ok\u200b\u202eevil\u202c\udb40\udc41\u001b[2K`
	for _, tc := range []struct{ name, resp, want string }{
		{"value", `{"ok":true,"result":{"value":"` + hostile + `","evidence":{"capability":"x"}}}`, "Value: \"" + `ok\u200b\u202eevil\u202c\udb40\udc41\u001b[2K` + "\""},
		{"feedback", `{"ok":true,"result":{"value":null,"observation":{"feedback":[{"level":"success","message":"` + hostile + `"}]}}}`, "The page says (success): " + escaped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := modeltool.Text([]byte(strings.ReplaceAll(tc.resp, "\x1b", `\u001b`)))
			if !strings.Contains(got, tc.want) || strings.ContainsAny(got, "\u200b\u202e\U000E0041\x1b") {
				t.Errorf("ToolText:\n%s\nwant it to contain %s and no hidden character", got, tc.want)
			}
		})
	}
	e := newEnv(t)
	mustDeclare(t, e.rt, Action{ID: "x.read", Title: "Read" + hostile, Description: "Reads" + hostile, Risk: "read",
		Run: func(context.Context, *Call) (any, error) { return nil, nil }})
	tools, err := e.rt.tools(context.Background(), "")
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %v, %v", tools, err)
	}
	if strings.ContainsAny(tools[0].Title+tools[0].Description, "\u200b\u202e\U000E0041\x1b") || !strings.Contains(tools[0].Description, escaped) {
		t.Errorf("tool title %q, description %q", tools[0].Title, tools[0].Description)
	}
}
