package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
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
	entry, _ := perr.Lookup(perr.ActionNotFound)

	tests := []struct {
		name       string
		capability string
		want       []string // the lines, in order
	}{
		{"success", "cart.add", []string{
			"OK: cart.add ran.",
			"Proof: cart.count increase met (0 → 3)",
			`Value: "added"`,
			"Changed: cart.count",
		}},
		{"business failure", "nope", []string{
			"ACTION_NOT_FOUND: The current page has no such action. Next: " + entry.Action.En,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, raw := e.send(e.invokeReq(tt.capability, map[string]any{}))
			got := strings.Split(ToolText(raw), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
	if got := ToolText([]byte(`{"ok":false,"error":{"code":"BAD_REQUEST","message":"no"}}`)); !strings.HasPrefix(got, "BAD_REQUEST: no.") {
		t.Errorf("protocol failure text %q", got)
	}
	if got := ToolText([]byte(`{`)); !strings.HasPrefix(got, "INTERNAL_ERROR") {
		t.Errorf("unreadable answer text %q", got)
	}
}
