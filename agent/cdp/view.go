package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/internal/axtree"
)

// The view of a page: what the browser's accessibility tree says it
// shows (Accessibility.getFullAXTree), one node a line, for an agent to
// act on a page, or a part of a page, that declares nothing for the job.
// It is read from the browser, not from the page's script; the strings in
// it (names, values) are the page's, and the caller bounds and quotes
// them.

// ViewNode is one line of a page's view.
type ViewNode struct {
	// Depth is how deep the line sits under the page's root (lines
	// without a role of their own are left out, their children moved up).
	Depth int `json:"depth"`
	// Role is the accessibility role ("button", "textbox"); "text" for
	// the page's text between controls.
	Role  string `json:"role"`
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
	// States are the node's states as words: "disabled", "checked",
	// "unchecked", "mixed", "expanded", "collapsed", "selected",
	// "pressed", "required", "invalid", "readonly", "modal",
	// "level=2".
	States []string `json:"states,omitempty"`
	// Node is the backend DOM node id of the element (0 for text): what
	// Act acts on.
	Node int64 `json:"node,omitempty"`
	// Secret says why the element's value is never read ("password",
	// "payment", "one-time code"), or for a frame owner (role Iframe) why
	// its document is not in the view ("frame of another origin",
	// "frame too deep", "frame"); Value is then empty and the element's
	// children are left out.
	Secret string `json:"secret,omitempty"`
	// Declared is the capability a Pling declaration in the page's markup
	// (data-pling-action, or a form's toolname) makes of this control or
	// of the form it is in, and Record the record it names (KIND:ID):
	// the page's attributes, untrusted; the caller matches them against
	// the tools it lists.
	Declared string `json:"declared,omitempty"`
	Record   string `json:"record,omitempty"`
	// Cells are the texts of a table row whose cells hold text only,
	// said on the row's line instead of a line per cell.
	Cells []string `json:"cells,omitempty"`
	// Frame is the child frame whose document holds the element ("" for
	// the tab's main frame), for Act to check before its input.
	Frame string `json:"frame,omitempty"`
}

// maxViewNodes bounds the lines of one view; the caller bounds its bytes.
const maxViewNodes = 3000

// View reads the view of doc: its accessibility tree, with each
// element's DOM attributes read alongside (DOM.getDocument) to find
// secret fields and Pling declarations. The tab must show doc before and
// after the reads (else ErrDocumentGone).
func (p *Page) View(ctx context.Context, doc Document) ([]ViewNode, error) {
	tab, tctx, cancel, err := p.onDocument(ctx, &doc)
	if err != nil {
		return nil, err
	}
	defer cancel()
	depth := int64(-1)
	// Pierced: the documents of same-process frames come with their
	// elements, which the view needs to keep their secret fields unread.
	pierce := true
	d, err := chromedp.Call(tctx, dom.GetDocument, dom.GetDocumentParams{Depth: &depth, Pierce: &pierce})
	if err != nil {
		return nil, err
	}
	before, err := chromedp.Call(tctx, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		return nil, err
	}
	els, owners := elementsOf(d.Root), framesOf(d.Root)
	out, err := p.frameView(tctx, doc.Frame, els, owners, frameOrigins(before.FrameTree), doc.Origin, 0)
	if err != nil {
		return nil, err
	}
	if err := p.checkDocument(ctx, tab, &doc); err != nil {
		return nil, err
	}
	// A child frame that navigated while it was read is another
	// document, maybe of another origin: its lines go.
	after, err := chromedp.Call(tctx, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		return nil, err
	}
	return keepSettled(out, frameOrigins(before.FrameTree), frameOrigins(after.FrameTree)), nil
}

// maxFrameDepth bounds how deep frames in frames are entered.
const maxFrameDepth = 3

// frameInfo is what the view knows of a frame: its origin and loader
// (the document it shows).
type frameInfo struct{ origin, loader string }

func frameOrigins(t *page.FrameTree) map[string]frameInfo {
	out := map[string]frameInfo{}
	var walk func(t *page.FrameTree)
	walk = func(t *page.FrameTree) {
		if t == nil || t.Frame == nil {
			return
		}
		out[string(t.Frame.ID)] = frameInfo{origin: strings.ToLower(t.Frame.SecurityOrigin), loader: string(t.Frame.LoaderID)}
		for _, c := range t.ChildFrames {
			walk(c)
		}
	}
	walk(t)
	return out
}

// framesOf maps each frame owner element (iframe, frame) whose document
// the pierced DOM holds to its frame.
func framesOf(root *cdproto.Node) map[int64]string {
	out := map[int64]string{}
	var walk func(n *cdproto.Node)
	walk = func(n *cdproto.Node) {
		if n == nil {
			return
		}
		if n.FrameID != "" && n.ContentDocument != nil {
			out[int64(n.BackendNodeID)] = string(n.FrameID)
		}
		for _, c := range n.Children {
			walk(c)
		}
		for _, c := range n.ShadowRoots {
			walk(c)
		}
		walk(n.ContentDocument)
	}
	walk(root)
	return out
}

// frameView is the view of one frame's document, each same-origin child
// frame's lines under its Iframe line (a frame of another origin, or one
// whose document the pierced DOM lacks, is named and not entered).
func (p *Page) frameView(ctx context.Context, frame string, els map[int64]*element, owners map[int64]string, frames map[string]frameInfo, origin string, level int) ([]ViewNode, error) {
	ax, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{FrameID: cdproto.FrameID(frame)})
	if err != nil {
		return nil, err
	}
	nodes := viewNodes(ax.Nodes, els)
	if level > 0 {
		for i := range nodes {
			nodes[i].Frame = frame
		}
	}
	var out []ViewNode
	for _, n := range nodes {
		if len(out) >= maxViewNodes {
			break
		}
		out = append(out, n)
		if n.Role != "Iframe" {
			continue
		}
		child, ok := owners[n.Node]
		switch {
		case !ok || frames[child].origin == "":
			out[len(out)-1].Secret = "frame"
			continue
		case frames[child].origin != origin:
			out[len(out)-1].Secret = "frame of another origin"
			continue
		case level+1 >= maxFrameDepth:
			out[len(out)-1].Secret = "frame too deep"
			continue
		}
		lines, err := p.frameView(ctx, child, els, owners, frames, origin, level+1)
		if err != nil {
			out[len(out)-1].Secret = "frame"
			continue
		}
		for _, l := range lines {
			l.Depth += n.Depth + 1
			out = append(out, l)
		}
	}
	return out, nil
}

// keepSettled drops the lines of child frames whose document changed
// between before and after the read (and of frames inside them).
func keepSettled(nodes []ViewNode, before, after map[string]frameInfo) []ViewNode {
	out := nodes[:0]
	for _, n := range nodes {
		if n.Frame != "" && (before[n.Frame] != after[n.Frame] || after[n.Frame].loader == "") {
			continue
		}
		out = append(out, n)
	}
	return out
}

// element is what the view reads of a DOM element: its tag, the few
// attributes it needs, and its parent element.
type element struct {
	tag    string
	attrs  map[string]string
	parent int64
}

// viewAttrs are the attributes the view reads.
var viewAttrs = map[string]bool{"type": true, "autocomplete": true, "data-pling-action": true, "data-pling-record": true,
	"data-pling-toolname": true, "toolname": true}

func elementsOf(root *cdproto.Node) map[int64]*element {
	out := map[int64]*element{}
	var walk func(n *cdproto.Node, parent int64)
	walk = func(n *cdproto.Node, parent int64) {
		if n == nil {
			return
		}
		// A frame's document is its own: no declaration around the
		// frame owner reaches into it.
		walk(n.ContentDocument, 0)
		id := int64(n.BackendNodeID)
		if n.NodeType == 1 {
			e := &element{tag: strings.ToLower(n.LocalName), parent: parent}
			for i := 0; i+1 < len(n.Attributes); i += 2 {
				if k := strings.ToLower(n.Attributes[i]); viewAttrs[k] {
					if e.attrs == nil {
						e.attrs = map[string]string{}
					}
					e.attrs[k] = n.Attributes[i+1]
				}
			}
			out[id] = e
			parent = id
		}
		for _, c := range n.Children {
			walk(c, parent)
		}
		for _, c := range n.ShadowRoots {
			walk(c, parent)
		}
	}
	walk(root, 0)
	return out
}

// secretOf says why an element's value is never read: a password field
// (type=password, or autocomplete current-password/new-password), a
// payment field (autocomplete cc-*), a one-time code (autocomplete
// one-time-code). secretFieldJS says the same of a live element in the
// page.
func secretOf(e *element) string {
	if e == nil {
		return ""
	}
	if e.tag == "input" && strings.EqualFold(strings.TrimSpace(e.attrs["type"]), "password") {
		return "password"
	}
	for _, tok := range strings.Fields(strings.ToLower(e.attrs["autocomplete"])) {
		switch {
		case tok == "current-password" || tok == "new-password":
			return "password"
		case strings.HasPrefix(tok, "cc-"):
			return "payment"
		case tok == "one-time-code":
			return "one-time code"
		}
	}
	return ""
}

// secretFieldJS is secretOf as a JavaScript function of a form element,
// for what runs in the page (changesJS): true for an input of
// type=password, or an element whose autocomplete tokens name a
// password, a payment field or a one-time code.
const secretFieldJS = `((e) => (e.localName === "input" && e.getAttribute("type")?.trim().toLowerCase() === "password") ||
    (e.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/).some((t) => t === "current-password" || t === "new-password" || t.startsWith("cc-") || t === "one-time-code"))`

// declaredOf is the capability a Pling declaration in the markup makes
// of the element or of the nearest element around it that declares one,
// and the record it names.
func declaredOf(els map[int64]*element, id int64) (capability, record string) {
	for i := 0; id != 0 && i < 64; i++ {
		e := els[id]
		if e == nil {
			return "", ""
		}
		if a := e.attrs["data-pling-action"]; a != "" {
			return a, e.attrs["data-pling-record"]
		}
		if e.tag == "form" {
			if n := e.attrs["data-pling-toolname"]; n != "" {
				return n, ""
			}
			if n := e.attrs["toolname"]; n != "" {
				return n, ""
			}
		}
		id = e.parent
	}
	return "", ""
}

// flattened are roles that make no line: their children take their place.
var flattened = map[string]bool{"generic": true, "none": true, "presentation": true, "InlineTextBox": true, "LineBreak": true,
	"paragraph": true, "ListMarker": true, "RootWebArea": true, "WebArea": true, "Section": true, "LabelText": true, "MenuListPopup": true, "rowgroup": true, "strong": true, "emphasis": true}

// viewNodes walks the accessibility tree from its root in document
// order.
func viewNodes(nodes []*accessibility.Node, els map[int64]*element) []ViewNode {
	byID, root := axtree.Index(nodes)
	var out []ViewNode
	var walk func(n *accessibility.Node, depth int, parentName string)
	walk = func(n *accessibility.Node, depth int, parentName string) {
		if n == nil || len(out) >= maxViewNodes || depth > 200 {
			return
		}
		role := axString(n.Role)
		name := strings.Join(strings.Fields(axString(n.Name)), " ")
		node := int64(n.BackendDOMNodeID)
		childDepth, childName := depth, parentName
		switch {
		case n.Ignored || flattened[role] || (name == "" && (role == "image" || role == "form")):
			// No line; its children move up.
		case role == "StaticText":
			if name != "" && !strings.Contains(parentName, name) {
				out = append(out, ViewNode{Depth: depth, Role: "text", Name: name})
			}
			return // its children are the text's inline boxes
		default:
			v := ViewNode{Depth: depth, Role: role, Name: name, Node: node, States: axStates(n.Properties)}
			if v.Secret = secretOf(els[node]); v.Secret == "" {
				v.Value = strings.Join(strings.Fields(axString(n.Value)), " ")
			}
			v.Declared, v.Record = declaredOf(els, node)
			if role == "row" {
				if cells, ok := textCells(n, byID); ok {
					v.Cells = cells
					out = append(out, v)
					return
				}
			}
			out = append(out, v)
			if v.Secret != "" {
				return // not even what an element inside it says
			}
			// A field's text is its value, said on its line already.
			childDepth, childName = depth+1, name+"\n"+v.Value
		}
		for _, c := range n.ChildIDs {
			walk(byID[c], childDepth, childName)
		}
	}
	walk(root, 0, "")
	// A label's text said again as the name of the control it labels
	// goes: the control's line says it.
	// A cell that holds one element of its own name (a link, a button)
	// is said by that element's line.
	kept := out[:0]
	for i := 0; i < len(out); i++ {
		v := out[i]
		if v.Role == "text" && i+1 < len(out) && out[i+1].Role != "text" && strings.Contains(out[i+1].Name, v.Name) {
			continue
		}
		if (v.Role == "cell" || v.Role == "gridcell") && v.Name != "" && i+1 < len(out) && out[i+1].Depth == v.Depth+1 &&
			out[i+1].Name == v.Name && (i+2 >= len(out) || out[i+2].Depth <= v.Depth) {
			out[i+1].Depth = v.Depth
			continue
		}
		kept = append(kept, v)
	}
	return kept
}

// textCells are the texts of row's cells when each is a data cell
// holding only text (nothing to act on inside it).
func textCells(row *accessibility.Node, byID map[accessibility.NodeID]*accessibility.Node) ([]string, bool) {
	var cells []string
	for _, id := range row.ChildIDs {
		c := byID[id]
		if c == nil || c.Ignored {
			continue
		}
		if r := axString(c.Role); r != "cell" && r != "gridcell" {
			return nil, false
		}
		if !onlyText(c, byID, 0) {
			return nil, false
		}
		cells = append(cells, strings.Join(strings.Fields(axString(c.Name)), " "))
	}
	return cells, len(cells) > 0
}

func onlyText(n *accessibility.Node, byID map[accessibility.NodeID]*accessibility.Node, depth int) bool {
	if depth > 8 {
		return false
	}
	for _, id := range n.ChildIDs {
		c := byID[id]
		if c == nil {
			continue
		}
		switch r := axString(c.Role); {
		case c.Ignored, r == "StaticText", r == "InlineTextBox", r == "generic", r == "none", r == "LineBreak":
			if !onlyText(c, byID, depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// axString is an AX value as text: a string as itself, a number or a
// boolean as its JSON.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.Value, &s) == nil {
		return s
	}
	raw := string(v.Value)
	if raw == "null" || strings.HasPrefix(raw, "{") || strings.HasPrefix(raw, "[") {
		return ""
	}
	return raw
}

// axStates are the states of a node worth a word.
func axStates(props []*accessibility.Property) []string {
	var out []string
	for _, pr := range props {
		if pr == nil {
			continue
		}
		v := axString(pr.Value)
		switch name := string(pr.Name); name {
		case "disabled", "required", "readonly", "modal", "selected":
			if v == "true" {
				out = append(out, name)
			}
		case "invalid":
			if v != "" && v != "false" {
				out = append(out, "invalid")
			}
		case "checked", "pressed":
			switch v {
			case "true":
				out = append(out, name)
			case "mixed":
				out = append(out, "mixed")
			case "false":
				if name == "checked" {
					out = append(out, "unchecked")
				}
			}
		case "expanded":
			if v == "true" {
				out = append(out, "expanded")
			} else if v == "false" {
				out = append(out, "collapsed")
			}
		case "level":
			if _, err := strconv.Atoi(v); err == nil {
				out = append(out, "level="+v)
			}
		}
	}
	return out
}

// NotActionableError is Act's refusal: the element cannot take the
// action now, and why (it is hidden, disabled, moving, covered…).
// Nothing was done to the page.
type NotActionableError struct{ Reason string }

func (e *NotActionableError) Error() string { return "not actionable: " + e.Reason }

var errNoElement = errors.New("the element is gone from the page")
