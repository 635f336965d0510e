package mcp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent/cdp"
)

// viewOf is the view of nodes as readView makes it, for one document.
func viewOf(nodes ...cdp.ViewNode) viewState {
	st := viewState{doc: Document{Tab: "t", Frame: "f", Loader: "l"}, refs: map[string]viewRef{}, read: true}
	for _, n := range nodes {
		in := viewLineInfo{depth: n.Depth, anchor: n.Role == "heading" || anchorRoles[n.Role] && (n.Name != "" || len(n.Cells) > 0)}
		if n.Node != 0 && n.Role != "text" {
			in.ref = "e" + strconv.FormatInt(n.Node, 10)
			st.refs[in.ref] = viewRef{node: n.Node}
		}
		st.lines = append(st.lines, viewLine(n, nil, true))
		st.info = append(st.info, in)
	}
	return st
}

// TestDiffViews: a later look at one document sends the lines that are
// new or whose ref's line changed, in document order, each run placed
// under the nearest heading or named part above it, and the refs that
// went; a text line counts as changed only when it is new.
func TestDiffViews(t *testing.T) {
	table := func(rows ...cdp.ViewNode) []cdp.ViewNode {
		out := []cdp.ViewNode{{Depth: 0, Role: "main", Node: 1},
			{Depth: 1, Role: "heading", Name: "Tickets", Node: 2},
			{Depth: 1, Role: "table", Node: 3}}
		return append(out, rows...)
	}
	row := func(node int64, cells ...string) cdp.ViewNode {
		return cdp.ViewNode{Depth: 2, Role: "row", Node: node, Cells: cells}
	}
	tail := []cdp.ViewNode{{Depth: 1, Role: "heading", Name: "Notes", Node: 90}, {Depth: 1, Role: "text", Name: "Saved"}}
	rows := []cdp.ViewNode{row(10, "T-1", "open"), row(11, "T-2", "open"), row(12, "T-3", "open")}
	before := viewOf(append(table(rows...), tail...)...)
	var many []cdp.ViewNode // ten rows, all replaced by one
	for i := int64(20); i < 30; i++ {
		many = append(many, row(i, "T-x", "open"))
	}
	for _, tc := range []struct {
		name   string
		before []cdp.ViewNode // else before
		after  []cdp.ViewNode
		want   string
		placed string // the ref the action was on
	}{
		{"nothing", nil, append(table(rows...), tail...), "", ""},
		{"one row changed", nil, append(table(row(10, "T-1", "open"), row(11, "T-2", "closed"), row(12, "T-3", "open")), tail...),
			"\n@ heading \"Tickets\" e2\n  row e11: \"T-2\" | \"closed\"", ""},
		{"a row gone, a row new, a text gone", nil, append(table(row(10, "T-1", "open"), row(12, "T-3", "open"), row(13, "T-4", "new")), tail[0]),
			"\n@ heading \"Tickets\" e2\n  row e13: \"T-4\" | \"new\"\nGone: e11; 1 text.", ""},
		{"a text new under the second heading", nil, append(table(rows...), tail[0], tail[1], cdp.ViewNode{Depth: 1, Role: "text", Name: "Saved"}),
			"\n@ heading \"Notes\" e90\n \"Saved\"", ""},
		{"two runs under one heading placed once", nil, append(table(row(10, "T-1", "x"), row(11, "T-2", "open"), row(12, "T-3", "x")), tail...),
			"\n@ heading \"Tickets\" e2\n  row e10: \"T-1\" | \"x\"\n  row e12: \"T-3\" | \"x\"", ""},
		{"a gone element's children go unnamed", table(row(10, "T-1", "open"), cdp.ViewNode{Depth: 2, Role: "row", Node: 14},
			cdp.ViewNode{Depth: 3, Role: "cell", Name: "T-5", Node: 15}, cdp.ViewNode{Depth: 3, Role: "button", Name: "Close", Node: 16}, row(12, "T-3", "open")),
			table(row(10, "T-1", "open"), row(12, "T-3", "open")), "\nGone: e14.", ""},
		{"a line placing two runs is sent once",
			[]cdp.ViewNode{{Depth: 0, Role: "heading", Name: "Tickets", Node: 2}, {Depth: 0, Role: "text", Name: "3 match"},
				{Depth: 0, Role: "table", Name: "All", Node: 3}, row(10, "T-1", "open"), {Depth: 0, Role: "text", Name: "Page 1"}},
			[]cdp.ViewNode{{Depth: 0, Role: "heading", Name: "Tickets", Node: 2}, {Depth: 0, Role: "text", Name: "1 match"},
				{Depth: 0, Role: "table", Name: "All", Node: 3}, row(10, "T-1", "x"), {Depth: 0, Role: "text", Name: "Page 2"}},
			"\n@ heading \"Tickets\" e2\n\"1 match\"\n@ table \"All\" e3\n  row e10: \"T-1\" | \"x\"\n\"Page 2\"\nGone: 2 texts.", ""},
		{"the acted element's line needs no placing", nil, append(table(row(10, "T-1", "open"), row(11, "T-2", "closed"), row(12, "T-3", "open")), tail...),
			"\n  row e11: \"T-2\" | \"closed\"", "e11"},
		{"more refs gone than named", table(many...), table(row(30, "T-9", "open")),
			"\n@ heading \"Tickets\" e2\n  row e30: \"T-9\" | \"open\"\nGone: 10 refs.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := before
			if tc.before != nil {
				b = viewOf(tc.before...)
			}
			d := diffViews(b, viewOf(tc.after...), tc.placed)
			if diff := cmp.Diff(tc.want, d.text()); diff != "" {
				t.Errorf("diff text (-want +got):\n%s", diff)
			}
			if d.empty() != (tc.want == "") {
				t.Errorf("empty = %v", d.empty())
			}
		})
	}
}

// TestLookScope: a look is scoped to what changed only against the last
// look the agent was shown whole of the same document; another document
// or tab, full, changes as large as the whole view, or a base it was not
// shown whole give the whole view; a view cut at its bound is not kept
// as a look to compare with.
func TestLookScope(t *testing.T) {
	say := lookTexts{whole: "WHOLE", changes: "CHANGES", none: "NONE"}
	rows := func(status string, n int) []cdp.ViewNode {
		out := []cdp.ViewNode{{Role: "heading", Name: "Tickets", Node: 2}}
		for i := 0; i < n; i++ {
			out = append(out, cdp.ViewNode{Depth: 1, Role: "row", Node: int64(10 + i), Cells: []string{"T", status}})
		}
		return out
	}
	before := viewOf(rows("open", 20)...)
	oneRow := viewOf(append(rows("open", 20), cdp.ViewNode{Depth: 1, Role: "text", Name: "Saved"})...)
	otherTab := oneRow
	otherTab.doc.Tab = "t2"
	huge := viewOf(rows(strings.Repeat("x", 70), 120)...)
	for _, tc := range []struct {
		name        string
		base, after viewState
		seen, full  bool
		want        string // the text's first word
		kept        bool   // a look is kept after it
	}{
		{"nothing changed", before, before, true, false, "NONE", true},
		{"one text new", before, oneRow, true, false, "CHANGES", true},
		{"full", before, oneRow, true, true, "WHOLE", true},
		{"another tab", before, otherTab, true, false, "WHOLE", true},
		{"no look yet", viewState{}, oneRow, true, false, "WHOLE", true},
		{"all rows changed", before, viewOf(rows("closed", 20)...), true, false, "WHOLE", true},
		{"a base not shown whole", before, oneRow, false, false, "CHANGES", false},
		{"over the bound", before, huge, true, false, "WHOLE", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Bridge
			text, _ := b.look(tc.base, tc.after, tc.seen, tc.full, say)
			if got, _, _ := strings.Cut(text, "\n"); got != tc.want {
				t.Errorf("the look starts %q, want %q:\n%.300s", got, tc.want, text)
			}
			if b.looked.read != tc.kept {
				t.Errorf("a look kept: %v, want %v", b.looked.read, tc.kept)
			}
		})
	}
}
