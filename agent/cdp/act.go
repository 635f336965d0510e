package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Actions on a view's elements, as a person's input: a click is the
// mouse pressed and released at the element's centre
// (Input.dispatchMouseEvent), typing is Input.insertText and key events.
// Before acting, the element must be actionable as Playwright defines it:
// attached, visible, enabled (and editable, to type), stable (its box the
// same across two animation frames) and receiving events (the hit test at
// the click point finds it or an element inside it). The checks run in
// an isolated world, where the page's script cannot replace the functions
// they call.

// Act is one action on an element of a view.
type Act struct {
	// Kind is "click", "fill", "select", "check", "uncheck", "press",
	// "scroll" or "upload".
	Kind string
	// Node is the element's backend DOM node id (ViewNode.Node); 0 with
	// "press" sends the key to whatever has the focus.
	Node int64
	// Text is what "fill" types, the option "select" chooses (its value
	// or its label), the key "press" sends, the file "upload" sets.
	Text string
	// Name is the name of the file "upload" sets (upload.txt when it is
	// not a plain file name).
	Name string
	// Frame is the child frame the element is in (ViewNode.Frame), ""
	// for the main frame: it must still show a document of the tab's
	// document's origin.
	Frame string
}

// checkFrame reports ErrDocumentGone unless frame ("" for none) is in
// the tab's frame tree on origin.
func checkFrame(ctx context.Context, frame, origin string) error {
	if frame == "" {
		return nil
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		return err
	}
	if f, ok := frameOrigins(tree.FrameTree)[frame]; !ok || f.origin != origin {
		return ErrDocumentGone
	}
	return nil
}

// actWorld names the isolated world the checks run in.
const actWorld = "pling-view"

// stableWait bounds how long an action waits for its element to become
// actionable (it retries while the element moves or is covered).
const stableWait = 5 * time.Second

// stateJS says why the element cannot take kind now ("" when it can).
const stateJS = `function (kind) {
  const el = this;
  if (!el.isConnected) return "it is no longer in the page";
  if (el.nodeType !== 1) return "it is not an element";
  if (kind === "press") return "";
  if (kind === "upload") {
    if (!(el.localName === "input" && (el.getAttribute("type") || "").toLowerCase() === "file")) return "it is not a file input";
    return el.matches(":disabled") ? "it is disabled" : "";
  }
  if (typeof el.checkVisibility === "function" ? !el.checkVisibility({ visibilityProperty: true }) : getComputedStyle(el).visibility !== "visible") return "it is not visible";
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return "it is not visible (it has no size)";
  if (kind === "scroll") return "";
  if (el.matches(":disabled") || el.closest("[aria-disabled=true]")) return "it is disabled";
  const tag = el.localName, type = (el.getAttribute("type") || "").toLowerCase();
  if (kind === "fill") {
    const text = tag === "textarea" || (tag === "input" && !["checkbox", "radio", "button", "submit", "reset", "file", "image", "hidden", "range", "color"].includes(type));
    if (!text && !el.isContentEditable) return "it does not take text (not a text field)";
    if (el.readOnly || el.getAttribute("aria-readonly") === "true") return "it is read-only";
  }
  if (kind === "select" && tag !== "select") return "it is not a select element (click its options instead)";
  if ((kind === "check" || kind === "uncheck") && !(tag === "input" && (type === "checkbox" || type === "radio")) &&
      !["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"].includes(el.getAttribute("role"))) return "it is not a checkbox, radio or switch";
  if (kind === "uncheck" && (type === "radio" || el.getAttribute("role") === "radio")) return "a radio button is unchecked by checking another";
  return "";
}`

// framesJS waits two animation frames (a tab in the background runs
// none: a timer bounds the wait).
const framesJS = `function () {
  return new Promise((ok) => {
    setTimeout(ok, 250);
    requestAnimationFrame(() => requestAnimationFrame(ok));
  });
}`

// insideJS reports whether the hit-tested node h is the element or
// inside it (across shadow roots).
const insideJS = `function (h) {
  for (let n = h; n; n = n.parentNode || n.host) if (n === this) return true;
  return false;
}`

// checkedJS is the element's checked state.
const checkedJS = `function () {
  if (this.localName === "input") return this.checked;
  return this.getAttribute("aria-checked") === "true";
}`

// selectJS chooses the option whose value or label is o, as a person's
// choice does (input and change events), and returns its label; "" when
// there is none.
const selectJS = `function (o) {
  const opts = Array.from(this.options);
  const opt = opts.find((x) => x.value === o) || opts.find((x) => x.label === o) || opts.find((x) => x.label.trim() === o.trim());
  if (!opt || opt.disabled) return "";
  opt.selected = true;
  this.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
  return opt.label || opt.value || " ";
}`

// selectAllJS focuses a text field and selects its text, so that what
// is typed next replaces it.
const selectAllJS = `function () {
  this.focus();
  if (typeof this.select === "function") { this.select(); return; }
  const r = document.createRange(); r.selectNodeContents(this);
  const s = getSelection(); s.removeAllRanges(); s.addRange(r);
}`

// keys are the keys "press" sends, by their DOM name.
var keys = map[string]string{"Enter": kb.Enter, "Tab": kb.Tab, "Escape": kb.Escape, "Backspace": kb.Backspace, "Delete": kb.Delete,
	"ArrowDown": kb.ArrowDown, "ArrowUp": kb.ArrowUp, "ArrowLeft": kb.ArrowLeft, "ArrowRight": kb.ArrowRight,
	"Home": kb.Home, "End": kb.End, "PageDown": kb.PageDown, "PageUp": kb.PageUp, "Space": " "}

// Act does a on doc: right before it reads the tab's document from the
// browser and acts only if it is still doc (else ErrDocumentGone, and
// nothing was done). Actions run one at a time. An element that is not actionable is a
// *NotActionableError, and nothing was done. It returns a note on what
// it did ("already checked", an option's label), the page's words.
func (p *Page) Act(ctx context.Context, doc Document, a Act) (string, error) {
	if err := p.goneErr(); err != nil {
		return "", err
	}
	if a.Kind == "press" {
		if _, ok := keys[a.Text]; !ok && len([]rune(a.Text)) != 1 {
			return "", &NotActionableError{Reason: fmt.Sprintf("%q is not a key this tool sends", a.Text)}
		}
	}
	p.acting.Lock()
	defer p.acting.Unlock()
	tab := p.cur()
	if err := p.checkDocument(ctx, tab, &doc); err != nil {
		return "", err
	}
	tctx, cancel := p.bounded(ctx, tab)
	defer cancel()
	// Right before input: the tab's document, and for an element in a
	// child frame, that frame still on the document's origin.
	check := func() error {
		if err := p.checkDocument(ctx, tab, &doc); err != nil {
			return err
		}
		return checkFrame(tctx, a.Frame, doc.Origin)
	}
	if err := checkFrame(tctx, a.Frame, doc.Origin); err != nil {
		return "", err
	}
	if a.Kind == "press" && a.Node == 0 {
		return "", p.press(tctx, tab, doc, a.Text)
	}
	t, err := resolveTarget(tctx, doc, a.Node)
	if err != nil {
		return "", err
	}
	defer t.release(tab)
	kind := a.Kind
	if err := t.state(kind); err != nil {
		return "", err
	}
	if kind == "upload" {
		// A file input is often hidden behind its label: it is set, as
		// Playwright's setInputFiles does, not clicked.
		path, err := p.uploadFile(a.Name, a.Text)
		if err != nil {
			return "", err
		}
		if err := check(); err != nil {
			return "", err
		}
		_, err = chromedp.Call(tctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{path}, BackendNodeID: t.node})
		return "", err
	}
	if _, err := chromedp.Call(tctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: t.node}); err != nil {
		return "", &NotActionableError{Reason: "it cannot be scrolled into view"}
	}
	switch kind {
	case "scroll":
		return "", nil
	case "press":
		if _, err := chromedp.Call(tctx, dom.Focus, dom.FocusParams{BackendNodeID: t.node}); err != nil {
			return "", &NotActionableError{Reason: "it cannot take the focus"}
		}
		return "", p.press(tctx, tab, doc, a.Text)
	case "select":
		return t.selectOption(a.Text)
	case "fill":
		if _, err := t.call(selectAllJS); err != nil {
			return "", err
		}
		if err := check(); err != nil {
			return "", err
		}
		if a.Text == "" {
			return "", p.press(tctx, tab, doc, "Delete")
		}
		_, err := chromedp.Call(tctx, input.InsertText, input.InsertTextParams{Text: a.Text})
		return "", err
	case "check", "uncheck":
		if on, err := t.checked(); err != nil {
			return "", err
		} else if on == (kind == "check") {
			return "it was " + kind + "ed already", nil
		}
	}
	if err := p.click(tctx, t, check); err != nil {
		return "", err
	}
	if kind == "check" || kind == "uncheck" {
		if on, err := t.checked(); err == nil && on != (kind == "check") {
			return "", &NotActionableError{Reason: "the click did not " + kind + " it (the page kept its state)"}
		}
	}
	return "", nil
}

// actElement is the element an Act works on, resolved in the tool's own
// isolated world of the document's frame, so the page's scripts neither
// see nor change what its checks call.
type actElement struct {
	ctx   context.Context
	world cdpruntime.ExecutionContextID
	node  cdproto.BackendNodeID
	obj   cdpruntime.RemoteObjectID
}

// resolveTarget resolves node in an isolated world of doc's frame; an
// element that is no longer there is not actionable.
func resolveTarget(ctx context.Context, doc Document, node int64) (*actElement, error) {
	world, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: cdproto.FrameID(doc.Frame), WorldName: actWorld})
	if err != nil {
		return nil, err
	}
	el, err := chromedp.Call(ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: cdproto.BackendNodeID(node), ExecutionContextID: world.ExecutionContextID})
	if err != nil || el.Object == nil || el.Object.ObjectID == "" {
		return nil, &NotActionableError{Reason: errNoElement.Error()}
	}
	return &actElement{ctx: ctx, world: world.ExecutionContextID, node: cdproto.BackendNodeID(node), obj: el.Object.ObjectID}, nil
}

// release lets the browser forget the element's handle, within 5 s of
// tab's context (the act's own may have ended).
func (t *actElement) release(tab context.Context) {
	rctx, rcancel := context.WithTimeout(tab, 5*time.Second)
	_, _ = chromedp.Call(rctx, cdpruntime.ReleaseObject, cdpruntime.ReleaseObjectParams{ObjectID: t.obj})
	rcancel()
}

// call runs the function fn on the element with args (a RemoteObjectID
// passes that object) and returns its value.
func (t *actElement) call(fn string, args ...any) (json.RawMessage, error) {
	var cargs []*cdpruntime.CallArgument
	for _, v := range args {
		if id, ok := v.(cdpruntime.RemoteObjectID); ok {
			cargs = append(cargs, &cdpruntime.CallArgument{ObjectID: id})
			continue
		}
		raw, _ := json.Marshal(v)
		cargs = append(cargs, &cdpruntime.CallArgument{Value: raw})
	}
	yes := true
	res, err := chromedp.Call(t.ctx, cdpruntime.CallFunctionOn, cdpruntime.CallFunctionOnParams{FunctionDeclaration: fn, ObjectID: t.obj,
		Arguments: cargs, ReturnByValue: &yes, AwaitPromise: &yes})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return nil, errors.New("the check in the page failed")
	}
	return json.RawMessage(res.Result.Value), nil
}

// state is nil when the element can take an act of kind, else why not.
func (t *actElement) state(kind string) error {
	raw, err := t.call(stateJS, kind)
	if err != nil {
		return err
	}
	var why string
	_ = json.Unmarshal(raw, &why)
	if why != "" {
		return &NotActionableError{Reason: why}
	}
	return nil
}

// selectOption chooses the option whose value or label is o and returns
// its label.
func (t *actElement) selectOption(o string) (string, error) {
	raw, err := t.call(selectJS, o)
	if err != nil {
		return "", err
	}
	var label string
	_ = json.Unmarshal(raw, &label)
	if label == "" {
		return "", &NotActionableError{Reason: "it has no enabled option with that value or label"}
	}
	return label, nil
}

// checked reports the element's checked state.
func (t *actElement) checked() (bool, error) {
	raw, err := t.call(checkedJS)
	return string(raw) == "true", err
}

// click clicks the element where it is once it stopped moving, and only
// when it, not something over it, gets the click there; check runs right
// before the mouse moves.
func (p *Page) click(ctx context.Context, t *actElement, check func() error) error {
	x, y, err := p.clickPoint(ctx, t.world, t.node, t.call)
	if err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	for _, ev := range []input.DispatchMouseEventParams{
		{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y},
		{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
		{Type: input.DispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1},
	} {
		if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, ev); err != nil {
			return err
		}
	}
	return nil
}

// clickPoint waits (at most stableWait) until the element's box is the
// same across two animation frames and the hit test at its centre finds
// it or an element inside it, and returns that centre.
func (p *Page) clickPoint(ctx context.Context, world cdpruntime.ExecutionContextID, node cdproto.BackendNodeID, call func(string, ...any) (json.RawMessage, error)) (float64, float64, error) {
	deadline := time.Now().Add(stableWait)
	why := "it kept moving"
	for time.Now().Before(deadline) && ctx.Err() == nil {
		q1, err := chromedp.Call(ctx, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: node})
		if err != nil || len(q1.Quads) == 0 {
			return 0, 0, &NotActionableError{Reason: "it is not visible (it has no box)"}
		}
		if _, err := call(framesJS); err != nil {
			return 0, 0, err
		}
		q2, err := chromedp.Call(ctx, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: node})
		if err != nil || len(q2.Quads) == 0 {
			return 0, 0, &NotActionableError{Reason: "it is not visible (it has no box)"}
		}
		if !sameQuad(q1.Quads[0], q2.Quads[0]) {
			continue
		}
		x, y := centre(q2.Quads[0])
		// The hit test takes document coordinates: the point in the
		// viewport plus how far the page is scrolled.
		var sx, sy float64
		if m, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdproto.Empty{}); err == nil && m.CSSLayoutViewport != nil {
			sx, sy = float64(m.CSSLayoutViewport.PageX), float64(m.CSSLayoutViewport.PageY)
		}
		hit, err := chromedp.Call(ctx, dom.GetNodeForLocation, dom.GetNodeForLocationParams{X: int64(math.Round(x + sx)), Y: int64(math.Round(y + sy))})
		if err != nil {
			why = "nothing receives a click at its centre (it is off the screen?)"
		} else if hit.BackendNodeID == node {
			return x, y, nil
		} else if inside, tag := p.inside(ctx, world, hit.BackendNodeID, call); inside {
			return x, y, nil
		} else {
			why = "another element (" + tag + ") would receive the click"
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, 0, &NotActionableError{Reason: why}
}

// inside reports whether the hit node is the element or inside it, and
// names the hit node's tag when it is not.
func (p *Page) inside(ctx context.Context, world cdpruntime.ExecutionContextID, hit cdproto.BackendNodeID, call func(string, ...any) (json.RawMessage, error)) (bool, string) {
	d, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: hit})
	tag := "an element"
	if err == nil && d.Node != nil {
		tag = tagName(d.Node.LocalName)
	}
	// The hit node, resolved in the element's own world, passed to it.
	r, err := chromedp.Call(ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: hit, ExecutionContextID: world})
	if err != nil || r.Object == nil {
		return false, tag
	}
	obj := r.Object.ObjectID
	raw, err := call(insideJS, obj)
	return err == nil && string(raw) == "true", tag
}

// tagName is a tag as a reason may say it: the page chooses a custom
// element's name, so one that is not short lower-case letters, digits and
// '-' is "an element".
func tagName(s string) string {
	if s == "" || len(s) > 32 {
		return "an element"
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return "an element"
		}
	}
	return s
}

func sameQuad(a, b dom.Quad) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 0.5 {
			return false
		}
	}
	return true
}

func centre(q dom.Quad) (float64, float64) {
	var x, y float64
	n := float64(len(q) / 2)
	for i := 0; i+1 < len(q); i += 2 {
		x += q[i]
		y += q[i+1]
	}
	return x / n, y / n
}

// press sends one key to what has the focus: a named key (keys) or one
// character.
func (p *Page) press(ctx, tab context.Context, doc Document, key string) error {
	r, ok := keys[key]
	if !ok {
		r = key
	}
	if err := p.checkDocument(ctx, tab, &doc); err != nil {
		return err
	}
	for _, rr := range r {
		for _, ev := range kb.Encode(rr) {
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, *ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitTextJS waits (at most ms) until the page's text has t (or, with
// gone, no longer has it); it says whether that came.
const waitTextJS = `(async (t, gone, ms) => {
  const end = Date.now() + ms;
  for (;;) {
    const has = ((document.body && document.body.innerText) || "").includes(t);
    if (has !== gone) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
})`

// WaitText waits (at most timeout) until doc's text shows text (or, with
// gone, no longer does), and says whether it came. It reads the page's
// rendered text in an isolated world; no field's value is in it.
func (p *Page) WaitText(ctx context.Context, doc Document, text string, gone bool, timeout time.Duration) (bool, error) {
	tab, tctx, cancel, err := p.onDocument(ctx, &doc)
	if err != nil {
		return false, err
	}
	defer cancel()
	world, err := chromedp.Call(tctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: cdproto.FrameID(doc.Frame), WorldName: actWorld})
	if err != nil {
		return false, err
	}
	t, _ := json.Marshal(text)
	g, _ := json.Marshal(gone)
	yes := true
	res, err := chromedp.Call(tctx, cdpruntime.Evaluate, cdpruntime.EvaluateParams{
		Expression: fmt.Sprintf("%s(%s, %s, %d)", waitTextJS, t, g, timeout.Milliseconds()),
		ContextID:  world.ExecutionContextID, AwaitPromise: &yes, ReturnByValue: &yes})
	if err != nil {
		// The page left while it waited: its document is gone.
		if cerr := p.checkDocument(ctx, tab, &doc); cerr != nil {
			return false, cerr
		}
		return false, err
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return false, errors.New("the wait in the page failed")
	}
	return string(res.Result.Value) == "true", nil
}
