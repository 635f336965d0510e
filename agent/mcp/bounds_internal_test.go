package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/runtime"
)

// TestBoundToolsCount: the tool-count bound cuts on its own, where the
// byte bound is far away: 1,001 small tools keep 1,000, and the last one
// kept says how many were left out.
func TestBoundToolsCount(t *testing.T) {
	tools := make([]Tool, MaxTools+1)
	for i := range tools {
		tools[i] = Tool{Tool: &sdk.Tool{Name: fmt.Sprintf("t%d", i)}, Capability: fmt.Sprintf("c%d", i)}
	}
	kept, dropped := boundTools(tools)
	if len(kept) != MaxTools || dropped != 1 {
		t.Fatalf("kept %d, dropped %d; want %d and 1", len(kept), dropped, MaxTools)
	}
	if d := kept[MaxTools-1].Tool.Description; !strings.Contains(d, "1 more tools of this page are not offered") {
		t.Errorf("the last tool kept does not say one was left out: %q", d)
	}
	if tools[MaxTools-1].Tool.Description != "" {
		t.Error("boundTools changed the caller's tool")
	}
}

// TestBoundsAreTheRuntimes: the agent-side bounds are the runtime's own
// (describe's limits, the declaration's text limits), so a page the
// runtime accepts is never cut by the bridge and one it refuses is.
func TestBoundsAreTheRuntimes(t *testing.T) {
	l := runtime.DefaultLimits()
	if MaxTools != l.MaxCapabilities {
		t.Errorf("MaxTools = %d, runtime's MaxCapabilities = %d", MaxTools, l.MaxCapabilities)
	}
	if MaxListBytes != l.MaxBytes {
		t.Errorf("MaxListBytes = %d, runtime's MaxBytes = %d", MaxListBytes, l.MaxBytes)
	}
	run := func(context.Context, *runtime.Call) (any, error) { return nil, nil }
	for _, tc := range []struct {
		name        string
		title, desc string
		ok          bool
	}{
		{"title at the bound", strings.Repeat("t", MaxTitleLen), "", true},
		{"title over the bound", strings.Repeat("t", MaxTitleLen+1), "", false},
		{"description at the bound", "T", strings.Repeat("d", MaxDescriptionLen), true},
		{"description over the bound", "T", strings.Repeat("d", MaxDescriptionLen+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := runtime.New()
			_, err := rt.DeclareAction(runtime.Action{ID: "a", Title: tc.title, Description: tc.desc, Run: run})
			if (err == nil) != tc.ok {
				t.Errorf("DeclareAction: %v; want accepted = %v", err, tc.ok)
			}
		})
	}
}

// TestBoundResultKeepsTextAfterInvalidBytes: a result whose text has an
// invalid byte early is cut at the bound, not emptied: only a rune the
// cut splits is dropped.
func TestBoundResultKeepsTextAfterInvalidBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
	}{
		{"invalid byte first", "\xff" + strings.Repeat("a", MaxResultBytes+10)},
		{"a rune split by the cut", strings.Repeat("a", MaxResultBytes-1) + "é" + strings.Repeat("b", 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := boundResult(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: tc.text}}})
			got := r.Content[0].(*sdk.TextContent).Text
			body, _, ok := strings.Cut(got, "\n(pling mcp cut this result")
			if !ok {
				t.Fatalf("no cut note in %d bytes", len(got))
			}
			if len(body) < MaxResultBytes-utf8.UTFMax {
				t.Errorf("kept %d bytes of the text, want about %d", len(body), MaxResultBytes)
			}
			if !strings.HasSuffix(body, "a") {
				t.Errorf("the cut left a broken rune at the end: %q", body[max(0, len(body)-4):])
			}
		})
	}
}

// TestTitleSaid: a title is said when the page's quoted words begin with
// it up to the end of the quote or of a sentence; one that adds words
// (a WebMCP tool's title over its own description) is not.
func TestTitleSaid(t *testing.T) {
	for _, tc := range []struct {
		name, title, words string
		want               bool
	}{
		{"the whole text", "Find orders", pageWords("Find orders"), true},
		{"the first sentence", "Add a note", pageWords("Add a note. Adds a note"), true},
		{"ends with a sentence mark", "Stop!", pageWords("Stop! Stops the run"), true},
		{"a quote in it", `Say "hi"`, pageWords(`Say "hi". Greets`), true},
		{"other words", "Look up a word", pageWords("Finds a word"), false},
		{"a longer first word", "Search", pageWords("Searches the tickets"), false},
		{"the start of a sentence only", "Search the", pageWords("Search the tickets"), false},
		{"no title", "", pageWords("Finds a word"), false},
		{"no description", "Look up a word", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := titleSaid(tc.title, tc.words); got != tc.want {
				t.Errorf("titleSaid(%q, %q) = %v, want %v", tc.title, tc.words, got, tc.want)
			}
		})
	}
}
