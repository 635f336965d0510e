package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/runtime"
)

// TestDuplicateIDStaysListed: two different markup declarations under one
// id never make the tool vanish: it is listed as unavailable with its
// reason and code, and a call answers
// DUPLICATE_ACTION_ID, not an unknown tool.
func TestDuplicateIDStaysListed(t *testing.T) {
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	run := func(context.Context, *runtime.Call) (any, error) { return true, nil }
	if _, err := rt.DeclareAction(runtime.Action{ID: "helpful", Title: "Helpful", Run: run, Identity: "markup", Markup: &runtime.MarkupRef{Path: "main button"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.DeclareAction(runtime.Action{ID: "helpful", Title: "Helpful (approved)", Run: run, Identity: "markup", Markup: &runtime.MarkupRef{Path: "#reviews button"}}); err == nil {
		t.Fatal("second declaration: no DUPLICATE_ACTION_ID")
	}
	s := connectRuntime(t, rt)
	res := s.listTools(t)
	var desc []string
	for _, tl := range res.Tools {
		if tl.Name == "helpful" {
			desc = append(desc, tl.Description)
		}
	}
	want := []string{"Unavailable when listed (Two different actions are declared under this id (DUPLICATE_ACTION_ID)). A result gives its parameters when it can run."}
	if diff := cmp.Diff(want, desc); diff != "" {
		t.Errorf("helpful's tool (-want +got):\n%s", diff)
	}
	if got, txt := callText(t, s, "helpful", nil); !got.IsError || !strings.HasPrefix(txt, "DUPLICATE_ACTION_ID") {
		t.Errorf("call: %s", txt)
	}
}
