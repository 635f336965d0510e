package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/pagetext"
)

// The view: where a page declares nothing for a job, an agent reads the
// page's accessibility tree (browser.view) and acts on its elements by
// ref (browser.act: click, fill, select, check, press, scroll, wait). A ref
// (e12) names one element of the document the view was read from: it is
// issued by a view, backed by the element's backend DOM node id, and
// refused once the tab shows another document. The view and its actions
// obey the guard as declared calls do: only a document the bridge
// checked and found on an allowed origin. Nothing done through the view
// is proven by the page (no expectation, no evidence), and results say
// so; on a Pling page the view marks the controls a declared tool covers.

// Viewer is a Browser that reads a document's view and acts on its
// elements (*cdp.Page is one).
type Viewer interface {
	View(ctx context.Context, doc Document) ([]cdp.ViewNode, error)
	Act(ctx context.Context, doc Document, a cdp.Act) (string, error)
	WaitText(ctx context.Context, doc Document, text string, gone bool, timeout time.Duration) (bool, error)
}

// viewState is a view read from a document: its lines, what the diff
// knows of each (info) and the elements its refs name; read is false for
// no view.
type viewState struct {
	doc   Document
	lines []string
	info  []viewLineInfo
	refs  map[string]viewRef
	read  bool
}

type viewRef struct {
	node  int64
	frame string // the child frame it is in, "" for the main frame
	line  string // the element's line, trimmed
}

// Bounds of the view, in bytes and characters.
const (
	maxViewBytes   = 8000
	maxViewName    = 80
	maxViewValue   = 80
	maxViewDepth   = 12
	maxWaitSeconds = 10
)

// notProven is what every view action's result says.
const notProven = "not proven by the page: no expectation, no evidence"

// actVerbs are browser.act's actions and how its result says each.
var actVerbs = map[string]string{"click": "Clicked", "fill": "Filled", "select": "Selected in", "check": "Checked",
	"uncheck": "Unchecked", "press": "Pressed ", "scroll": "Scrolled to", "upload": "", "wait": "", "wait_gone": ""}

// maxUploadBytes bounds the file browser.act upload gives a file input.
const maxUploadBytes = 1 << 20

// waitStates are the states browser.act wait waits for on a ref: the
// view's state words, "enabled" (not disabled) and "visible" (in the
// view); wait_gone with a ref waits until the element leaves the view.
var waitStates = []string{"visible", "enabled", "disabled", "checked", "unchecked", "expanded", "collapsed", "selected", "pressed", "invalid"}

// addViewTools adds browser.view and browser.act: two tools, not one per
// action, since every tool is sent in every tools/list (RATIONALE.md).
func (b *Bridge) addViewTools(v Viewer) {
	handler := func(h func(ctx context.Context, in viewArgs) (*sdk.CallToolResult, error)) sdk.ToolHandler {
		return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			args, ok := arguments(req.Params.Arguments)
			if !ok {
				return browserError("INVALID_ARGS", "The arguments are not one JSON object.", "pass an object."), nil
			}
			res, err := h(ctx, viewArgs(args))
			if err != nil {
				return browserError("BROWSER_FAILED", err.Error(), "call browser.view to see the page now."), nil
			}
			b.takeDownloads(ctx, req.Session, res)
			return res, nil
		}
	}
	b.server.AddTool(&sdk.Tool{Name: "browser.view", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		Description: "The page's elements with refs; find: lines with this text.",
		// full (the whole view again) is told by the result that needs it,
		// not in every tools/list (RATIONALE.md).
		InputSchema: json.RawMessage(`{"type":"object","properties":{"find":{"type":"string"}}}`)},
		handler(func(ctx context.Context, in viewArgs) (*sdk.CallToolResult, error) {
			full, _ := in["full"].(bool)
			return b.viewResult(ctx, v, in.str("find"), full)
		}))
	b.server.AddTool(&sdk.Tool{Name: "browser.act",
		Description: "Acts on a view ref; text: to fill, select, press, upload or wait for.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"do":{"enum":["click","fill","select","check","uncheck","press","scroll","upload","wait","wait_gone"]},"ref":{"type":"string"},"text":{"type":"string"},"name":{"type":"string"}},"required":["do"]}`)},
		handler(func(ctx context.Context, in viewArgs) (*sdk.CallToolResult, error) {
			do := in.str("do")
			verb, ok := actVerbs[do]
			switch {
			case !ok:
				return browserError("INVALID_ARGS", "do must be one of click, fill, select, check, uncheck, press, scroll, upload, wait, wait_gone.", "pass one of them."), nil
			case (do == "wait" || do == "wait_gone") && in.str("ref") != "":
				return b.waitState(ctx, v, in.str("ref"), in.str("text"), do == "wait_gone")
			case do == "wait" || do == "wait_gone":
				return b.wait(ctx, v, in.str("text"), do == "wait_gone")
			case do == "upload" && len(in.str("text")) > maxUploadBytes:
				return browserError("INVALID_ARGS", fmt.Sprintf("The file is %d bytes, over the %d pling mcp gives a file input.", len(in.str("text")), maxUploadBytes), "give a shorter file."), nil
			case (do == "fill" || do == "select" || do == "press" || do == "upload") && in["text"] == nil:
				return browserError("INVALID_ARGS", do+" needs text.", "pass text."), nil
			case do != "press" && in.str("ref") == "":
				return browserError("INVALID_ARGS", do+" needs a ref from browser.view.", "pass ref."), nil
			}
			if do == "upload" {
				verb = fmt.Sprintf("Uploaded %s (%d bytes) to", quoteCut(stdcmpOr(in.str("name"), "upload.txt"), maxViewName), len(in.str("text")))
			}
			return b.act(ctx, v, in.str("ref"), cdp.Act{Kind: do, Text: in.str("text"), Name: in.str("name")}, verb)
		}))
}

// viewArgs are a view tool's arguments.
type viewArgs map[string]any

func (a viewArgs) str(k string) string {
	s, _ := a[k].(string)
	return s
}

// viewDocument is the document a view may be read from or acted on: the
// one the bridge checked and found allowed (waiting for a check under
// way); after a navigation the bridge has not looked at yet, it looks.
func (b *Bridge) viewDocument(ctx context.Context) (Document, *sdk.CallToolResult) {
	doc, err := b.pageDocument(ctx)
	if err != nil {
		if _, rerr := b.Refresh(ctx); rerr == nil {
			doc, err = b.pageDocument(ctx)
		}
	}
	if err != nil {
		var left *LeftSiteError
		if errors.As(err, &left) && left.Origin != "" {
			return Document{}, browserError("ORIGIN_NOT_ALLOWED", fmt.Sprintf("The tab shows %s, outside the sites this session may use; nothing was read or done.", pagetext.Line(left.Origin, maxURLText)),
				"browser.back, or browser.open a URL on those sites.")
		}
		return Document{}, browserError("NO_PAGE", "The tab shows no page checked for this session; nothing was read or done.", "call browser.page.")
	}
	return doc, nil
}

// lastView is the document the tab shows now, as viewDocument, with the
// agent's last view (whatever document it was read from: viewRefIn
// tells).
func (b *Bridge) lastView(ctx context.Context) (Document, viewState, *sdk.CallToolResult) {
	doc, refused := b.viewDocument(ctx)
	if refused != nil {
		return doc, viewState{}, refused
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return doc, b.view, nil
}

// viewResult reads the view of the checked document and gives it whole
// (the first look at a document, or with full), what changed since the
// agent's last look at it (viewdiff.go), or with find only its lines that
// have that text (any case): on a page whose view is over the bound, what
// the agent looks for is still found. Every element of the view gets its
// ref.
func (b *Bridge) viewResult(ctx context.Context, v Viewer, find string, full bool) (*sdk.CallToolResult, error) {
	doc, refused := b.viewDocument(ctx)
	if refused != nil {
		return refused, nil
	}
	st, err := b.readView(ctx, v, doc)
	if err != nil {
		return b.viewFailed(err), nil
	}
	b.mu.Lock()
	first := !b.viewSaid
	b.viewSaid = true
	base := b.looked
	b.mu.Unlock()
	extra := ""
	if first {
		// What browser.act's description leaves out, said once.
		extra = `; browser.act upload sets text as a file named name; wait with a ref waits for a state: ` + strings.Join(waitStates, ", ") + `; wait_gone with a ref, for it to go`
	}
	if find == "" {
		text, sent := b.look(base, st, true, full, lookTexts{
			whole:   `View (quoted text is the page's; act by ref; ` + notProven + extra + `):`,
			changes: `View changes since your last look (quoted text is the page's; act by ref; @ places the lines after it; full:true for all` + extra + `):`,
			none:    `Nothing changed since your last look (full:true for all of it` + extra + `).`})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}},
			StructuredContent: map[string]any{"refs": len(st.refs), "lines": sent}}, nil
	}
	var lines []string
	want := strings.ToLower(find)
	for _, l := range st.lines {
		if strings.Contains(strings.ToLower(l), want) {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	var t strings.Builder
	fmt.Fprintf(&t, "View, the %d of %d lines with %s (quoted text is the page's; act by ref; %s):", len(lines), len(st.lines), quoteCut(find, maxViewName), notProven+extra)
	writeLines(&t, lines, maxViewBytes)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: t.String()}},
		StructuredContent: map[string]any{"refs": len(st.refs), "lines": len(lines)}}, nil
}

// writeLines writes lines, one a line, at most max bytes, saying how
// many were left out.
func writeLines(t *strings.Builder, lines []string, max int) {
	n := 0
	for i, l := range lines {
		if n+len(l)+1 > max {
			fmt.Fprintf(t, "\n… %d more lines not shown (pling mcp's bound of %d bytes; browser.view find narrows it)", len(lines)-i, max)
			return
		}
		t.WriteString("\n" + l)
		n += len(l) + 1
	}
}

// readView reads doc's view, writes its lines and keeps them as the
// agent's last look.
func (b *Bridge) readView(ctx context.Context, v Viewer, doc Document) (viewState, error) {
	nodes, err := v.View(ctx, doc)
	if err != nil {
		return viewState{}, err
	}
	b.mu.Lock()
	toolOf := make(map[string]string, len(b.tools))
	for n, e := range b.tools {
		toolOf[e.capability] = n
	}
	b.mu.Unlock()
	st := viewState{doc: doc, refs: map[string]viewRef{}, read: true}
	for _, n := range nodes {
		in := viewLineInfo{depth: min(n.Depth, maxViewDepth),
			anchor: n.Role == "heading" || anchorRoles[n.Role] && (n.Name != "" || len(n.Cells) > 0)}
		if n.Node != 0 && n.Role != "text" {
			in.ref = "e" + strconv.FormatInt(n.Node, 10)
			st.refs[in.ref] = viewRef{node: n.Node, frame: n.Frame, line: strings.TrimSpace(viewLine(n, toolOf, false))}
		}
		st.lines = append(st.lines, viewLine(n, toolOf, true))
		st.info = append(st.info, in)
	}
	b.mu.Lock()
	b.view = st
	b.mu.Unlock()
	return st, nil
}

// viewLine is one node of the view: indented by its depth, its role, its
// name and value quoted and cut (the page's words), its ref (withRef),
// its states, a row's cells, and the declared tool that covers it.
func viewLine(n cdp.ViewNode, toolOf map[string]string, withRef bool) string {
	var l strings.Builder
	l.WriteString(strings.Repeat(" ", min(n.Depth, maxViewDepth)))
	if n.Role == "text" {
		l.WriteString(quoteCut(n.Name, maxViewName*2))
		return l.String()
	}
	l.WriteString(pagetext.Line(n.Role, 32))
	if n.Name != "" {
		l.WriteString(" " + quoteCut(n.Name, maxViewName))
	}
	if n.Node != 0 && withRef {
		l.WriteString(" e" + strconv.FormatInt(n.Node, 10))
	}
	for i, c := range n.Cells {
		if i == 0 {
			l.WriteString(": ")
		} else {
			l.WriteString(" | ")
		}
		l.WriteString(quoteCut(c, maxViewName))
	}
	switch {
	case n.Secret != "":
		l.WriteString(" (" + n.Secret + ": not read)")
	case n.Value != "" && n.Value != n.Name:
		l.WriteString(" =" + quoteCut(n.Value, maxViewValue))
	}
	for _, s := range n.States {
		l.WriteString(" " + s)
	}
	if tool := declaredTool(n, toolOf); tool != "" {
		l.WriteString(" (use " + tool + ")")
	}
	return l.String()
}

// declaredTool is the tool the bridge lists for the capability the
// markup declares on n, with its record: only a tool listed now, named
// by the bridge, never the page's attribute as written.
func declaredTool(n cdp.ViewNode, toolOf map[string]string) string {
	if n.Declared == "" {
		return ""
	}
	if n.Record != "" {
		kind, id, ok := strings.Cut(n.Record, ":")
		if tool := toolOf[n.Declared+"@"+kind]; ok && tool != "" {
			return tool + " record " + quoteCut(id, maxViewName)
		}
	}
	return toolOf[n.Declared]
}

// viewRefIn is the element ref names in the view st, when st is a view
// of doc; otherwise the STALE_REF or UNKNOWN_REF answer, its sentence
// ended by end.
func viewRefIn(st viewState, doc Document, ref, end string) (viewRef, *sdk.CallToolResult) {
	r, ok := st.refs[ref]
	switch {
	case st.refs == nil || !st.doc.Same(doc):
		return r, browserError("STALE_REF", fmt.Sprintf("%s is not from a view of the page the tab shows now (it navigated since)%s", pagetext.Line(ref, 20), end),
			"call browser.view for the refs of this page.")
	case !ok:
		return r, browserError("UNKNOWN_REF", fmt.Sprintf("The last view has no %s%s", pagetext.Line(ref, 20), end), "use a ref from browser.view.")
	}
	return r, nil
}

// act does a on the element ref names, in the document its view was
// read from, and says what changed in the view.
func (b *Bridge) act(ctx context.Context, v Viewer, ref string, a cdp.Act, verb string) (*sdk.CallToolResult, error) {
	doc, st, refused := b.lastView(ctx)
	if refused != nil {
		return refused, nil
	}
	what := ""
	if ref != "" || a.Kind != "press" {
		r, refused := viewRefIn(st, doc, ref, "; nothing was done.")
		if refused != nil {
			return refused, nil
		}
		a.Node, a.Frame, what = r.node, r.frame, " "+ref+" ("+r.line+")"
	}
	mark := b.markNav()
	note, err := v.Act(ctx, doc, a)
	var na *cdp.NotActionableError
	switch {
	case errors.As(err, &na):
		return browserError("NOT_ACTIONABLE", fmt.Sprintf("%s: %s; nothing was done.", strings.TrimSpace(what), na.Reason),
			"browser.view to see the page now, or browser.act wait for what it waits for."), nil
	case errors.Is(err, cdp.ErrDocumentGone):
		return browserError("STALE_REF", "The tab navigated before the action; nothing was done.", "call browser.view."), nil
	case err != nil:
		return nil, err
	}
	to, tools := b.followNavigation(ctx, mark)
	var t strings.Builder
	if a.Kind == "press" {
		t.WriteString(verb + pagetext.Line(a.Text, 20) + what)
	} else {
		t.WriteString(verb + what)
	}
	switch {
	case note != "" && a.Kind == "select":
		t.WriteString(": " + quoteCut(note, maxViewName)) // the option's label, the page's words
	case note != "":
		t.WriteString("; " + note)
	}
	t.WriteString(" (" + notProven + ").")
	r := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: t.String()}}, StructuredContent: map[string]any{"proven": false}}
	if to != "" {
		b.mu.Lock()
		b.view, b.looked = viewState{}, viewState{}
		b.mu.Unlock()
		navigationText(r, to, tools)
		r.Content[0].(*sdk.TextContent).Text += " Refs from before are gone (browser.view)."
		return r, nil
	}
	r.Content[0].(*sdk.TextContent).Text += b.viewChanges(ctx, v, st, ref)
	return r, nil
}

// viewChanges reads the view again and says what changed since the
// agent's last look at the document (or, if it has seen none whole, since
// before, the view the action's ref came from), as browser.view would.
func (b *Bridge) viewChanges(ctx context.Context, v Viewer, before viewState, ref string) string {
	doc, err := b.pageDocument(ctx)
	if err != nil || !doc.Same(before.doc) {
		return "\nThe page changed under the action: call browser.view."
	}
	after, err := b.readView(ctx, v, doc)
	if err != nil {
		return "\nThe view could not be read again: call browser.view."
	}
	b.mu.Lock()
	base, seen := b.looked, true
	b.mu.Unlock()
	if !base.read || !base.doc.Same(doc) {
		base, seen = before, false
	}
	text, _ := b.look(base, after, seen, false, lookTexts{
		whole:   "\nThe view now (quoted text is the page's; act by ref):",
		changes: "\nView changes (@ places them):",
		none:    "\nThe view did not change.", placed: ref})
	return text
}

// lookTexts are how a look says its three kinds: the whole view, what
// changed, nothing changed; placed is a ref the result names already (the
// action's), whose changed line needs no line to place it.
type lookTexts struct{ whole, changes, none, placed string }

// look is the text of a look at after, scoped to base: what changed since
// base, when base is a view of after's document and that is smaller than
// after whole, else after whole (at most maxViewBytes). seen says the
// agent was shown base whole; then what this look shows whole becomes the
// agent's last look. It returns the text and how many lines it sent.
func (b *Bridge) look(base, after viewState, seen, full bool, say lookTexts) (string, int) {
	whole := linesSize(after.lines) <= maxViewBytes
	if !full && base.read && base.doc.Same(after.doc) {
		d := diffViews(base, after, say.placed)
		text := d.text()
		if d.empty() {
			text = ""
		}
		if len(text) < linesSize(after.lines) && len(text) <= maxViewBytes {
			b.keepLook(after, seen)
			if d.empty() {
				return say.none, 0
			}
			return say.changes + text, len(d.lines)
		}
	}
	var t strings.Builder
	t.WriteString(say.whole)
	writeLines(&t, after.lines, maxViewBytes)
	b.keepLook(after, whole)
	return t.String(), len(after.lines)
}

// keepLook keeps st as the agent's last look, if it was shown st whole;
// else the next look is whole again.
func (b *Bridge) keepLook(st viewState, whole bool) {
	if !whole {
		st = viewState{}
	}
	b.mu.Lock()
	b.looked = st
	b.mu.Unlock()
}

// wait waits until a text shows (or goes), at most maxWaitSeconds.
func (b *Bridge) wait(ctx context.Context, v Viewer, text string, gone bool) (*sdk.CallToolResult, error) {
	if text == "" {
		return browserError("INVALID_ARGS", "wait needs text.", "pass the text to wait for."), nil
	}
	doc, refused := b.viewDocument(ctx)
	if refused != nil {
		return refused, nil
	}
	ok, err := v.WaitText(ctx, doc, text, gone, maxWaitSeconds*time.Second)
	if errors.Is(err, cdp.ErrDocumentGone) {
		return browserError("STALE_REF", "The tab navigated while it waited.", "call browser.page."), nil
	}
	if err != nil {
		return nil, err
	}
	q := quoteCut(text, maxViewName)
	switch {
	case ok && gone:
		return textResult(q + " is gone from the page."), nil
	case ok:
		return textResult(q + " shows on the page."), nil
	case gone:
		return browserError("TIMEOUT", fmt.Sprintf("%s still shows after %d s.", q, maxWaitSeconds), "browser.view to see the page."), nil
	}
	return browserError("TIMEOUT", fmt.Sprintf("%s did not show in %d s.", q, maxWaitSeconds), "browser.view to see the page."), nil
}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// viewFailed is the result of a view that could not be read.
func (b *Bridge) viewFailed(err error) *sdk.CallToolResult {
	if errors.Is(err, cdp.ErrDocumentGone) {
		return browserError("STALE_REF", "The tab navigated while the view was read.", "call browser.view again.")
	}
	return browserError("BROWSER_FAILED", err.Error(), "call browser.page to see where the session is.")
}

// waitState waits (at most maxWaitSeconds) until the element ref names
// is in state (one of waitStates) in the view, or, with gone, has left
// it; the ref must come from the last view of this document.
func (b *Bridge) waitState(ctx context.Context, v Viewer, ref, state string, gone bool) (*sdk.CallToolResult, error) {
	if !gone && !slices.Contains(waitStates, state) {
		return browserError("INVALID_ARGS", "wait with a ref needs text, a state: "+strings.Join(waitStates, ", ")+".", "pass one of them (or no ref, to wait for a text)."), nil
	}
	doc, st, refused := b.lastView(ctx)
	if refused != nil {
		return refused, nil
	}
	r, refused := viewRefIn(st, doc, ref, ".")
	if refused != nil {
		return refused, nil
	}
	what := ref + " (" + r.line + ")"
	want := state
	if gone {
		want = "gone from the view"
	}
	deadline := time.Now().Add(maxWaitSeconds * time.Second)
	for {
		nodes, err := v.View(ctx, doc)
		if errors.Is(err, cdp.ErrDocumentGone) {
			return browserError("STALE_REF", "The tab navigated while it waited.", "call browser.page."), nil
		}
		if err != nil {
			return nil, err
		}
		if inState(nodes, r.node, state, gone) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: what + " is " + want + "."}},
				StructuredContent: map[string]any{"ref": ref, "state": want}}, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return browserError("TIMEOUT", fmt.Sprintf("%s is not %s after %d s.", what, want, maxWaitSeconds), "browser.view to see the page."), nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// inState reports whether the view's node is in state: "visible" is in
// the view, "enabled" is in it and not disabled, another state is one of
// its state words; gone is not in the view.
func inState(nodes []cdp.ViewNode, node int64, state string, gone bool) bool {
	var n *cdp.ViewNode
	for i := range nodes {
		if nodes[i].Node == node {
			n = &nodes[i]
			break
		}
	}
	switch {
	case gone || n == nil:
		return gone && n == nil
	case state == "visible":
		return true
	case state == "enabled":
		return !slices.Contains(n.States, "disabled")
	}
	return slices.Contains(n.States, state)
}
