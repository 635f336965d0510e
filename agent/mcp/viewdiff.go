package mcp

import (
	"fmt"
	"strings"
)

// A look scoped to what changed: after the agent has seen a document's
// whole view, a later look at the same document (browser.view, or the
// view after a browser.act) sends only the lines that are new or changed
// since, each run of them placed under the nearest line around it that
// names a part of the page (a heading, a named landmark, table, form or
// row), and the refs that went. After a navigation or a tab switch, or
// when that would be larger than the whole view, the whole view is sent.

// viewLineInfo is what the diff knows of one line of a view besides its
// text: its depth, its ref ("" for the page's text) and whether it names
// a part of the page, so that it can place changed lines near it.
type viewLineInfo struct {
	depth  int
	ref    string
	anchor bool
}

// anchorRoles are roles whose named line places the changed lines under
// it; a heading places them with or without a name.
var anchorRoles = map[string]bool{"main": true, "navigation": true, "banner": true, "contentinfo": true,
	"complementary": true, "region": true, "form": true, "search": true, "dialog": true, "alertdialog": true,
	"table": true, "grid": true, "treegrid": true, "list": true, "listbox": true, "menu": true, "tablist": true,
	"tabpanel": true, "group": true, "row": true, "article": true, "Iframe": true}

// viewDiff is what changed from before to after (two views of one
// document): lines are after's lines to send, in document order, each
// either changed (new, or its ref's line is not what it was) or placing
// the changed ones after it (context, each sent once); gone are before's
// refs that after lacks, in before's order, less those inside a gone
// element (gone with it), and texts the count of before's text lines
// after lacks.
type viewDiff struct {
	lines   []string
	context []bool
	changed int
	gone    []string
	texts   int
}

// diffViews compares two views of one document, line by line: a line
// with a ref is changed when its ref is new or its line differs; a text
// line when after holds more of it than before. A run of changed lines
// that starts at placed (a ref the result names already) gets no line to
// place it.
func diffViews(before, after viewState, placed string) viewDiff {
	old := make(map[string]string, len(before.info))
	oldText := map[string]int{}
	for i, in := range before.info {
		if in.ref != "" {
			old[in.ref] = strings.TrimSpace(before.lines[i])
		} else {
			oldText[strings.TrimSpace(before.lines[i])]++
		}
	}
	changed := make([]bool, len(after.lines))
	kept := map[string]bool{}
	for i, in := range after.info {
		l := strings.TrimSpace(after.lines[i])
		switch {
		case in.ref != "":
			kept[in.ref] = true
			was, ok := old[in.ref]
			changed[i] = !ok || was != l
		case oldText[l] > 0:
			oldText[l]--
		default:
			changed[i] = true
		}
	}
	var d viewDiff
	goneAt := -1 // the depth of the gone element whose lines these are, -1 for none
	for _, in := range before.info {
		if goneAt >= 0 && in.depth > goneAt {
			continue // inside a gone element: gone with it, not named
		}
		goneAt = -1
		if in.ref != "" && !kept[in.ref] {
			d.gone = append(d.gone, in.ref)
			goneAt = in.depth
		}
	}
	for _, n := range oldText {
		d.texts += n
	}
	sent := map[int]bool{} // the lines sent as context
	for i := range after.lines {
		if !changed[i] {
			continue
		}
		if (i == 0 || !changed[i-1]) && (placed == "" || after.info[i].ref != placed) {
			if c := anchorOf(after, changed, i); c >= 0 && !sent[c] {
				d.lines = append(d.lines, after.lines[c])
				d.context = append(d.context, true)
				sent[c] = true
			}
		}
		d.lines = append(d.lines, after.lines[i])
		d.context = append(d.context, false)
		d.changed++
	}
	return d
}

// anchorOf is the unchanged line that places line i: the nearest of its
// ancestors (the lines above it less deep) or headings above it that
// names a part of the page; -1 for none.
func anchorOf(v viewState, changed []bool, i int) int {
	depth := v.info[i].depth
	for j := i - 1; j >= 0; j-- {
		in := v.info[j]
		if in.depth >= depth && !strings.HasPrefix(strings.TrimSpace(v.lines[j]), "heading ") {
			continue
		}
		if in.depth < depth {
			depth = in.depth
		}
		if in.anchor {
			if changed[j] {
				return -1 // sent already, as a changed line
			}
			return j
		}
	}
	return -1
}

// empty reports whether nothing changed.
func (d viewDiff) empty() bool { return d.changed == 0 && len(d.gone) == 0 && d.texts == 0 }

// maxGoneRefs is how many gone refs a diff names; past it, it counts
// them: a page that replaced a table's rows would otherwise send a ref
// for every cell it dropped, more than the rows it shows now.
const maxGoneRefs = 8

// text writes the diff: its lines (a context line marked "@ "), then the
// refs gone (or how many, past maxGoneRefs) and how many texts went.
func (d viewDiff) text() string {
	var t strings.Builder
	for i, l := range d.lines {
		if d.context[i] {
			t.WriteString("\n@ " + strings.TrimSpace(l))
		} else {
			t.WriteString("\n" + l)
		}
	}
	var gone []string
	switch {
	case len(d.gone) > maxGoneRefs:
		gone = append(gone, fmt.Sprintf("%d refs", len(d.gone)))
	case len(d.gone) > 0:
		gone = append(gone, strings.Join(d.gone, " "))
	}
	switch {
	case d.texts == 1:
		gone = append(gone, "1 text")
	case d.texts > 1:
		gone = append(gone, fmt.Sprintf("%d texts", d.texts))
	}
	if len(gone) > 0 {
		t.WriteString("\nGone: " + strings.Join(gone, "; ") + ".")
	}
	return t.String()
}

// linesSize is the size of lines written whole, one a line.
func linesSize(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}
