package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The person at the browser. Pling's approval dialog lives in a closed
// shadow root of a <pling-ui data-pling-ui=approve> element, out of reach
// of page scripts, and answers only trusted events. So the tests find it
// the way a tool outside the page does — through DevTools, which sees
// closed shadow roots — and answer it with real input
// (Input.dispatchMouseEvent), which the page sees as a person's click.

// approvalHost is the stable element other tools can find the approval
// dialog by; the dialog itself is inside its shadow root.
const approvalHost = `[data-pling-ui=approve]`

// approvalDialog is one open approval dialog, as DevTools sees it.
type approvalDialog struct {
	tb   *tab
	host *chromedp.Node
	root *chromedp.Node // the host's (closed) shadow root
}

// approval waits for the open approval dialog (the first one, when a
// host of an answered one is still leaving) and returns it.
func (tb *tab) approval() *approvalDialog {
	tb.t.Helper()
	sel := chromedp.CSS(approvalHost + `:not([data-e2e-answered])`)
	ctx, cancel := context.WithTimeout(tb.ctx, waitLimit)
	defer cancel()
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(sel, chromedp.Populate(-1, true)))
	if err != nil {
		tb.t.Fatalf("no approval dialog (%s): %v", approvalHost, err)
	}
	host := nodes[0]
	host.RLock()
	roots := host.ShadowRoots
	host.RUnlock()
	d := &approvalDialog{tb: tb, host: host, root: host}
	if len(roots) > 0 {
		d.root = roots[0]
		d.wait(chromedp.WaitVisible(chromedp.CSS(`dialog[open]`), chromedp.FromNode(d.root)))
	}
	return d
}

// wait runs one chromedp action against the dialog, bounded by waitLimit.
func (d *approvalDialog) wait(a chromedp.Action[chromedp.Void]) {
	d.tb.t.Helper()
	ctx, cancel := context.WithTimeout(d.tb.ctx, waitLimit)
	defer cancel()
	if err := chromedp.Do(ctx, a); err != nil {
		d.tb.t.Fatalf("approval dialog: %v", err)
	}
}

// text is the dialog's text, as a person reads it.
func (d *approvalDialog) text() string {
	d.tb.t.Helper()
	ctx, cancel := context.WithTimeout(d.tb.ctx, waitLimit)
	defer cancel()
	var s string
	var err error
	if d.root == d.host { // no shadow root: the host is the dialog
		s, err = chromedp.Run(ctx, chromedp.TextContent(chromedp.NodeIDs{d.host.NodeID}))
	} else {
		s, err = chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`dialog`), chromedp.FromNode(d.root)))
	}
	if err != nil {
		d.tb.t.Fatalf("approval dialog text: %v", err)
	}
	return s
}

// shows returns the dialog's text, failing the test for each of wants it
// does not contain.
func (d *approvalDialog) shows(wants ...string) string {
	d.tb.t.Helper()
	text := d.text()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			d.tb.t.Errorf("the approval dialog does not show %q: %q", want, text)
		}
	}
	return text
}

// answer clicks Approve ("approve") or Deny ("deny") with trusted input,
// after waiting out Approve's inert delay, and waits until the dialog
// has gone. The host is marked first (through DevTools, as a tool
// would) so that a next queued dialog is not taken for this one.
func (d *approvalDialog) answer(answer string) {
	d.tb.t.Helper()
	if answer == "approve" {
		d.waitApprovable()
	}
	d.wait(chromedp.SetAttributeValue(chromedp.NodeIDs{d.host.NodeID}, "data-e2e-answered", "1"))
	d.click(answer)
	d.tb.waitJS(`!document.querySelector("[data-e2e-answered]")`)
}

// click clicks Approve ("approve") or Deny (any other answer) with
// trusted input at once, without waiting for Approve to be enabled (a
// person's hurried click).
func (d *approvalDialog) click(answer string) {
	d.tb.t.Helper()
	btn := `[data-pling-ui-answer=no]`
	if answer == "approve" {
		btn = `[data-pling-ui-answer=yes]`
	}
	d.wait(chromedp.Click(chromedp.CSS(btn), chromedp.FromNode(d.root)))
}

// waitApprovable waits until Approve is enabled: its inert delay is over.
func (d *approvalDialog) waitApprovable() {
	d.tb.t.Helper()
	d.wait(chromedp.WaitEnabled(chromedp.CSS(`[data-pling-ui-answer=yes]`), chromedp.FromNode(d.root)))
}

// personAnswers waits for the approval dialog, answers it like a person
// ("approve" or "deny") and returns the text it showed.
func (tb *tab) personAnswers(answer string) string {
	tb.t.Helper()
	d := tb.approval()
	text := d.text()
	d.answer(answer)
	return text
}

// inertFor is an upper bound of ui.js's INERT_MS, for tests that check
// Approve is disabled at first.
const inertFor = 700 * time.Millisecond

// personTab is the person's tab in the test's browser (a chromedp
// context), where they open the authority's screens.
type personTab struct{ ctx context.Context }

// do runs actions in the person's tab within waitLimit; when they fail,
// the test fails with what the screen shows.
func (p personTab) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(p.ctx, waitLimit)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		dctx, dcancel := context.WithTimeout(p.ctx, 5*time.Second)
		defer dcancel()
		shown, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("%s: %v; the screen shows %q", what, err, shown)
	}
}

// eval evaluates expr in the person's tab (awaiting a promise).
func (p personTab) eval(t *testing.T, expr string) string {
	t.Helper()
	sctx, cancel := context.WithTimeout(p.ctx, waitLimit)
	defer cancel()
	v, err := chromedp.Run(sctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate in the person's tab: %v", err)
	}
	return v
}

// answer opens the screen at u and presses its button answer ("approve",
// "deny"), then waits for the screen to say it is done.
func (p personTab) answer(t *testing.T, u, answer string) {
	t.Helper()
	p.do(t, "the person's "+answer+" on "+u, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("#"+answer)),
		chromedp.Click(chromedp.CSS("#"+answer)), chromedp.WaitVisible(chromedp.CSS("#done")))
}
