package mcp_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// Tools carry the risk's annotations for clients on MCP 2026-07-28 and
// 2025-11-25 alike; a read, whose output is the page's data, says its
// output is untrusted: openWorldHint and the bridge's _meta
// "pling/untrustedContentHint". The title is not sent again: each
// description begins with it (TestToolTitleSentOnce).
func TestToolTitleAndAnnotations(t *testing.T) {
	f, tr := false, true
	want := map[string]struct {
		title string
		ann   sdk.ToolAnnotations
	}{
		"find":      {"", sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &tr}},
		"note_add":  {"", sdk.ToolAnnotations{DestructiveHint: &f}},
		"orders_rm": {"", sdk.ToolAnnotations{DestructiveHint: &tr}},
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run("MCP "+version, func(t *testing.T) {
			rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
			run := func(context.Context, *runtime.Call) (any, error) { return nil, nil }
			for _, a := range []runtime.Action{
				{ID: "find", Title: "Find orders", Risk: schema.RiskRead, Run: run},
				{ID: "note.add", Title: "Add a note", Run: run},
				{ID: "orders.rm", Title: "Delete all orders", Risk: schema.RiskDestructive, Run: run},
			} {
				if _, err := rt.DeclareAction(a); err != nil {
					t.Fatal(err)
				}
			}
			s := connectVersion(t, runtimeBridge(rt), version)
			if got := s.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			res := s.listTools(t)
			seen := 0
			for _, tl := range res.Tools {
				w, ok := want[tl.Name]
				if !ok {
					continue
				}
				seen++
				if tl.Title != w.title {
					t.Errorf("%s: title %q, want %q", tl.Name, tl.Title, w.title)
				}
				if untrusted := tl.Meta[plingmcp.MetaUntrusted] == true; untrusted != (tl.Name == "find") {
					t.Errorf("%s: _meta %v: untrusted content %v, want %v", tl.Name, tl.Meta, untrusted, tl.Name == "find")
				}
				if tl.Annotations == nil {
					t.Errorf("%s: no annotations", tl.Name)
				} else if diff := cmp.Diff(w.ann, *tl.Annotations); diff != "" {
					t.Errorf("%s: annotations (-want +got):\n%s", tl.Name, diff)
				}
			}
			if seen != len(want) {
				t.Errorf("listed %d of the %d tools", seen, len(want))
			}
		})
	}
}

// A title taken from the description's first sentence (a WebMCP
// declarative form's tooldescription) is not said twice in the tool's
// description: "Search the tickets. Returns …", not "Search the tickets.
// Search the tickets. Returns …".
func TestToolDescriptionDoesNotRepeatTheTitle(t *testing.T) {
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	run := func(context.Context, *runtime.Call) (any, error) { return nil, nil }
	if _, err := rt.DeclareAction(runtime.Action{ID: "search_tickets", Title: "Search the tickets", Description: "Search the tickets. Returns the matching ids", Risk: schema.RiskRead, Run: run}); err != nil {
		t.Fatal(err)
	}
	s := connectRuntime(t, rt)
	res, err := s.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("tools %v, %v", res, err)
	}
	want := `From the page: "Search the tickets. Returns the matching ids"`
	if got := res.Tools[0].Description; got != want {
		t.Errorf("description %q, want %q", got, want)
	}
}

// A capability's title is the first words of its tool's description, so
// the tool's title (for a client's display) is not sent a second time.
func TestToolTitleSentOnce(t *testing.T) {
	for _, tc := range []struct {
		name, title, description, wantDesc string
	}{
		{"title only", "Find orders", "", `From the page: "Find orders"`},
		{"title and description", "Add a note", "Adds a note to the order", `From the page: "Add a note. Adds a note to the order"`},
		{"title is the first sentence", "Search the tickets", "Search the tickets. Returns the matching ids", `From the page: "Search the tickets. Returns the matching ids"`},
		{"title with a quote", `Say "hi"`, "Greets", `From the page: "Say \"hi\". Greets"`},
		{"title ending a sentence", "Stop!", "Stops the run", `From the page: "Stop!. Stops the run"`},
		// The runtime titles an action without a title with its id (a
		// WebMCP declarative form without tooltitle): the description
		// says what it does, and the tool's name is the id.
		{"no title", "", "Books a class for the member", `From the page: "Books a class for the member"`},
		{"no title nor description", "", "", `From the page: "act"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
			run := func(context.Context, *runtime.Call) (any, error) { return nil, nil }
			if _, err := rt.DeclareAction(runtime.Action{ID: "act", Title: tc.title, Description: tc.description, Risk: schema.RiskRead, Run: run}); err != nil {
				t.Fatal(err)
			}
			s := connectRuntime(t, rt)
			res, err := s.ListTools(context.Background(), nil)
			if err != nil || len(res.Tools) != 1 {
				t.Fatalf("tools %v, %v", res, err)
			}
			got := [2]string{res.Tools[0].Title, res.Tools[0].Description}
			if diff := cmp.Diff([2]string{"", tc.wantDesc}, got); diff != "" {
				t.Errorf("title, description (-want +got):\n%s", diff)
			}
		})
	}
}
