package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pling-go/pling/schema"
)

// TestFailingDeclaration: a records reader, a state reader or an
// availability check that fails costs only its own declaration. Describe
// answers with the rest of the page and names the failure with the
// page's own text (first line, bounded): a reader's as a declaration
// mistake in the context's feedback, a check's as its action's
// unavailable reason; the model tools are the rest, and lint tells the
// author (pling check, pling.check(), the development console).
func TestFailingDeclaration(t *testing.T) {
	long := "orders not loaded yet " + strings.Repeat("x", 5000) + "\n    at load (orders.js:12)"
	tests := []struct {
		name            string
		declare         func(t *testing.T, rt *Runtime)
		wantUnavailable []schema.Unavailable
		wantFeedback    []schema.Feedback
		wantLint        []string
		wantRecords     []string // record kinds listed in the context
	}{
		{"a records reader that fails", func(t *testing.T, rt *Runtime) {
			rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) { return nil, errors.New("orders not loaded yet") }})
		}, []schema.Unavailable{
			{ID: "pay@order", Reason: "Its records (order) could not be read: the records reader failed", Title: "Pay", Risk: "write"},
		}, []schema.Feedback{
			{Level: "error", Message: `Declaration mistake: the records reader of "order" failed, so its rows are not listed: orders not loaded yet`},
		}, []string{
			`pling: records "order": the reader failed (the page says: orders not loaded yet), so its rows are not listed and its row actions are unavailable; make it return [{id, label, visible}] by exactly those names`,
		}, []string{"customer"}},
		{"a records reader that panics, with a long message and a stack", func(t *testing.T, rt *Runtime) {
			rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) { panic(errors.New(long)) }})
		}, []schema.Unavailable{
			{ID: "pay@order", Reason: "Its records (order) could not be read: the records reader failed", Title: "Pay", Risk: "write"},
		}, []schema.Feedback{
			{Level: "error", Message: `Declaration mistake: the records reader of "order" failed, so its rows are not listed: panicked: orders not loaded yet ` + strings.Repeat("x", 80) + "…"},
		}, []string{
			`pling: records "order": the reader failed (the page says: panicked: orders not loaded yet ` + strings.Repeat("x", 167) + `…), so its rows are not listed and its row actions are unavailable; make it return [{id, label, visible}] by exactly those names`,
		}, []string{"customer"}},
		{"a state reader that fails", func(t *testing.T, rt *Runtime) {
			rt.DeclareRecords(Records{Kind: "order", Read: rowsOf("ord_1")})
			rt.DeclareState(State{Key: "total", Read: func(context.Context) (any, error) { return nil, errors.New("cart is undefined") }})
		}, nil, []schema.Feedback{
			{Level: "error", Message: `Declaration mistake: the reader of the state "total" failed, so it reads null: cart is undefined`},
		}, []string{
			`pling: state "total": the reader failed (the page says: cart is undefined), so it reads null; make read() return the state's JSON value`,
		}, []string{"customer", "order"}},
		{"an availability check that throws", func(t *testing.T, rt *Runtime) {
			rt.DeclareRecords(Records{Kind: "order", Read: rowsOf("ord_1")})
			mustDeclare(t, rt, Action{ID: "export", Title: "Export",
				Available: func(context.Context, string) Availability { panic(errors.New("stock is not defined")) },
				Run:       func(context.Context, *Call) (any, error) { return nil, nil }})
		}, []schema.Unavailable{
			{ID: "export", Reason: "The availability check failed: panicked: stock is not defined", Title: "Export", Risk: "write"},
		}, nil, []string{
			`pling: action "export": its availability check throws (the page says: panicked: stock is not defined), so it is unavailable; make available return true, false or a reason`,
		}, []string{"customer", "order"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			mustDeclare(t, e.rt, Action{ID: "refresh", Title: "Refresh", Run: func(context.Context, *Call) (any, error) { return nil, nil }})
			mustDeclare(t, e.rt, Action{ID: "pay", Title: "Pay", Record: &RecordRef{Kind: "order"}, Run: func(context.Context, *Call) (any, error) { return nil, nil }})
			e.rt.DeclareRecords(Records{Kind: "customer", Read: rowsOf("c1", "c2")})
			tt.declare(t, e.rt)

			resp, _ := e.send(e.describeReq())
			if got := outcome(t, resp); got != "ok" {
				t.Fatalf("describe: %s, want ok", got)
			}
			d := e.describe("")
			listed := capIDs(d)
			if !contains(listed, "refresh") {
				t.Errorf("listed %v, want refresh among them", listed)
			}
			if v, ok := d.Context.States["total"]; ok && v != nil {
				t.Errorf("state total = %v, want null", v)
			}
			if diff := cmp.Diff(tt.wantUnavailable, d.Context.Unavailable, cmpopts.IgnoreFields(schema.Unavailable{}, "InputSchema")); diff != "" {
				t.Errorf("unavailable (-want +got):\n%s", diff)
			}
			var kinds []string
			for k := range d.Context.Records {
				kinds = append(kinds, k)
			}
			if diff := cmp.Diff(tt.wantRecords, kinds, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("record kinds (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFeedback, d.Context.Feedback); diff != "" {
				t.Errorf("feedback (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLint, e.rt.lint(context.Background())); diff != "" {
				t.Errorf("lint (-want +got):\n%s", diff)
			}
			tools, err := e.rt.tools(context.Background(), "")
			if err != nil {
				t.Fatalf("Tools: %v", err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if !contains(names, "refresh") {
				t.Errorf("tools %v, want refresh among them", names)
			}
		})
	}
}

func rowsOf(ids ...string) func(context.Context) ([]RecordItem, error) {
	return func(context.Context) ([]RecordItem, error) {
		out := make([]RecordItem, len(ids))
		for i, id := range ids {
			out[i] = RecordItem{ID: id}
		}
		return out, nil
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
