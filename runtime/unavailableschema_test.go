package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/schema"
)

// TestUnavailableCarriesInputSchema: a capability that cannot run now is
// described with its input schema, title, description, risk and whether
// a person is asked, as it would be listed when available,
// so an agent can offer it with its real parameters (for a tool first
// listed while unavailable); a declaration mistake (an entry with a
// code) has none, and a context over its byte bound drops the schemas
// before it drops any entry.
func TestUnavailableCarriesInputSchema(t *testing.T) {
	no := func(context.Context, string) Availability { return Unavailable("Pick a slot first") }
	params := map[string]Param{"slot": {Type: "string", Required: true, Description: strings.Repeat("s", 300)}}
	t.Run("listed with its schema", func(t *testing.T) {
		e := newEnv(t)
		mustDeclare(t, e.rt, Action{ID: "booking.confirm", Title: "Confirm", Description: "Books the slot", Risk: "destructive", Approval: true, Params: params, Available: no})
		mustDeclare(t, e.rt, Action{ID: "dup", Title: "One"})
		_, _ = e.rt.DeclareAction(Action{ID: "dup", Title: "Two"})
		d := e.describe("")
		in := inputSchema(params)
		want := []schema.Unavailable{
			{ID: "booking.confirm", Reason: "Pick a slot first", InputSchema: &in,
				Title: "Confirm", Description: "Books the slot", Risk: "destructive", Approval: true},
			{ID: "dup", Reason: "Two different actions are declared under this id", Code: "DUPLICATE_ACTION_ID"},
		}
		if diff := cmp.Diff(want, d.Context.Unavailable); diff != "" {
			t.Errorf("unavailable (-want +got):\n%s", diff)
		}
	})
	t.Run("schemas go first when the context is too big", func(t *testing.T) {
		e := newEnv(t, limits(func(l *Limits) { l.MaxBytes = 3000 }))
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			mustDeclare(t, e.rt, Action{ID: id, Title: id, Description: strings.Repeat("d", 200), Params: params, Available: no})
		}
		d := e.describe("")
		if len(d.Context.Unavailable) != 5 {
			t.Fatalf("unavailable: %d entries, want all 5 (without their schemas)", len(d.Context.Unavailable))
		}
		for _, u := range d.Context.Unavailable {
			if u.InputSchema != nil || u.Description != "" {
				t.Errorf("%s kept its schema or description in a context over its bound", u.ID)
			}
			if u.Title != u.ID || u.Risk != "write" {
				t.Errorf("%s lost its title or risk in a context over its bound: %q, %q", u.ID, u.Title, u.Risk)
			}
		}
		if d.Truncated == nil || !cmp.Equal(d.Truncated.Reasons, []string{"bytes"}) {
			t.Errorf("truncated = %+v, want bytes", d.Truncated)
		}
	})
}
