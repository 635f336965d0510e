package runtime

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/schema"
)

// TestUnexposedFeedback: with withUnexposedFeedback, describe's feedback
// says how many declared actions the site allowlist hides (never their ids), with the
// patterns; without it (fixture pages, the conformance suite) nothing
// changes.
func TestUnexposedFeedback(t *testing.T) {
	run := func(context.Context, *Call) (any, error) { return nil, nil }
	declare := func(t *testing.T, rt *Runtime) {
		for _, a := range []Action{
			{ID: "cart.add", Title: "Add", Run: run},
			{ID: "checkout", Title: "Checkout", Run: run},
			{ID: "open", Title: "Open", Record: &RecordRef{Kind: "order"}, Run: run},
		} {
			if _, err := rt.DeclareAction(a); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		opts   []Option
		want   []schema.Feedback
		listed []string
	}{
		{"all exposed", []Option{WithExpose("*"), withUnexposedFeedback()}, nil, []string{"cart.add", "checkout", "open@order"}},
		{"some hidden", []Option{WithExpose("cart.*"), withUnexposedFeedback()}, []schema.Feedback{{Level: "warning",
			Message: `2 declared action(s) are not exposed by the site allowlist (data-expose / expose: "cart.*"); the page's console names them`}}, []string{"cart.add"}},
		{"nothing exposed", []Option{WithExpose(), withUnexposedFeedback()}, []schema.Feedback{{Level: "warning",
			Message: `3 declared action(s) are not exposed by the site allowlist (data-expose / expose: none); the page's console names them`}}, []string{}},
		{"off by default", []Option{WithExpose("cart.*")}, nil, []string{"cart.add"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			declare(t, e.rt)
			d := e.describe("")
			if diff := cmp.Diff(tc.want, d.Context.Feedback); diff != "" {
				t.Errorf("feedback (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.listed, capIDs(d)); diff != "" {
				t.Errorf("capabilities (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSiteExposes: a row action is matched under its folded id.
func TestSiteExposes(t *testing.T) {
	rt := New(WithExpose("open@*", "cart.*"))
	for _, tc := range []struct {
		a    Action
		want bool
	}{
		{Action{ID: "cart.add"}, true},
		{Action{ID: "open"}, false},
		{Action{ID: "open", Record: &RecordRef{Kind: "order"}}, true},
		{Action{ID: "checkout"}, false},
	} {
		t.Run(capabilityIDOf(&tc.a), func(t *testing.T) {
			if got := rt.siteExposes(tc.a); got != tc.want {
				t.Errorf("siteExposes = %v, want %v", got, tc.want)
			}
		})
	}
}
