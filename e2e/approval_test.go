package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// approveDisabled reads the disabled state of the dialog's Approve button
// over DevTools (which sees the closed shadow root).
func approveDisabled(t *testing.T, d *approvalDialog) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(d.tb.ctx, waitLimit)
	defer cancel()
	disabled, err := chromedp.Run(ctx, chromedp.JavascriptAttribute[bool](chromedp.CSS(`[data-pling-ui-answer=yes]`), "disabled", chromedp.FromNode(d.root)))
	if err != nil {
		t.Fatalf("reading Approve's state: %v", err)
	}
	return disabled
}

// testApproval checks the approval dialog on the demo orders page from
// the person's side: it shows what the decision is bound to, one
// challenge at a time, and only a person's input answers it.
func testApproval(t *testing.T, site *browserSite) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, *browserSite)
	}{
		{"shows-input", approvalShowsInput},
		{"one-at-a-time", approvalOneAtATime},
		{"page-script-cannot-approve", approvalPageScriptCannotApprove},
		{"says-who-asks-and-what", approvalSaysWhoAsks},
		{"keeps-clear-of-the-row", approvalKeepsClearOfTheRow},
		{"escaped-and-cut", approvalEscapedAndCut},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, site) })
	}
}

// approvalShowsInput: the dialog shows the action, the record and the
// input it is asked to approve, and Approve runs the refund.
func approvalShowsInput(t *testing.T, site *browserSite) {
	tb := site.open(t, "/orders/")
	orders := refundable(t, tb, 1)
	res := tb.refundAsync(orders[0].ID, "wrong-item")
	d := tb.approval()
	d.shows("Refund order", orders[0].Label, orders[0].ID, "Why the order is refunded", "wrong-item")
	d.waitApprovable()
	saveScreenshot(t, tb, "approval-refund.png")
	d.answer("approve")
	tb.succeeded(res, "refund")
}

// approvalOneAtATime: a second challenge waits behind the first,
// counted, and a click meant for the first cannot approve the second.
func approvalOneAtATime(t *testing.T, site *browserSite) {
	tb := site.open(t, "/orders/")
	orders := refundable(t, tb, 2)
	first := tb.refundAsync(orders[0].ID, "damaged")
	d1 := tb.approval()
	second := tb.refundAsync(orders[1].ID, "late")
	// The second challenge waits behind the first, counted.
	deadline := time.Now().Add(waitLimit)
	for {
		text := d1.text()
		n := eval[int](tb, `document.querySelectorAll("[data-pling-ui=approve]").length`)
		if n != 1 {
			t.Fatalf("%d approval dialogs open at once, want 1", n)
		}
		if strings.Contains(text, orders[0].Label) && strings.Contains(text, "1 more waiting") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first dialog shows %q, want %s and \"1 more waiting\"", text, orders[0].Label)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Approve the first with a trusted click (d1.answer waits for
	// Approve to be enabled; not d1.answer here, which then polls until
	// the host is gone: the second dialog is read at once instead).
	d1.waitApprovable()
	d1.wait(chromedp.SetAttributeValue(chromedp.NodeIDs{d1.host.NodeID}, "data-e2e-answered", "1"))
	clicked := time.Now()
	d1.click("approve")
	// The next dialog appears in the same task that removes this one.
	// Approve is inert for a moment after it appears, so a click meant
	// for the first dialog cannot approve the second: its state, read
	// over DevTools, is disabled, and a trusted click on it now does
	// not answer it.
	d2 := tb.approval()
	disabled := approveDisabled(t, d2)
	if !disabled {
		t.Fatalf("Approve on the next dialog is enabled when read %v after the click on the first (ui.js keeps it disabled for %v)", time.Since(clicked), inertFor)
	}
	d2.click("approve")
	tb.succeeded(first, "first refund")
	select {
	case o := <-second:
		t.Fatalf("a trusted click on the disabled Approve answered the second dialog (error %v)", o.err)
	case <-time.After(200 * time.Millisecond):
	}
	// It becomes enabled after the inert delay.
	d2.waitApprovable()
	text := d2.text()
	if !strings.Contains(text, orders[1].Label) || strings.Contains(text, "more waiting") {
		t.Errorf("the second dialog shows %q, want %s and no count", text, orders[1].Label)
	}
	d2.answer("deny")
	wantCode(t, tb.outcome(second).err, perr.PermissionDenied)
}

// approvalPageScriptCannotApprove: a script of the page cannot answer
// the dialog, whatever it hooks before ui.js loads.
func approvalPageScriptCannotApprove(t *testing.T, site *browserSite) {
	// Each variant is a page script that runs after pling.js and
	// before ui.js (which loads at the first approval), then tries to
	// answer the dialog once it is past the inert delay.
	for _, v := range []struct{ name, before, attack string }{
		// It captures every shadow root ui.js makes, closed or not,
		// and clicks Approve.
		{"click", `(() => {
  const attach = Element.prototype.attachShadow;
  window.__e2eRoots = [];
  Element.prototype.attachShadow = function (o) { const r = attach.call(this, o); window.__e2eRoots.push(r); return r; };
  return true;
})()`, `(() => {
  let n = 0;
  const scopes = [document, ...window.__e2eRoots];
  for (const s of scopes) {
    for (const b of s.querySelectorAll("[data-pling-ui-answer=yes]")) {
      b.click();
      b.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, view: window }));
      b.dispatchEvent(new PointerEvent("click", { bubbles: true }));
      n++;
    }
  }
  return n;
})()`},
		// It redefines the onclick setter and
		// addEventListener, captures every handler ui.js registers, and
		// calls each with a made-up event that says isTrusted.
		{"captured-handler", `(() => {
  window.__e2eHandlers = [];
  const d = Object.getOwnPropertyDescriptor(HTMLElement.prototype, "onclick");
  Object.defineProperty(HTMLElement.prototype, "onclick", { configurable: true, get: d.get,
    set(f) { window.__e2eHandlers.push(f); d.set.call(this, f); } });
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, f, o) {
    if (typeof f === "function") window.__e2eHandlers.push(f);
    return add.call(this, type, f, o);
  };
  return true;
})()`, `(() => {
  let n = 0;
  // Approve's handler: the one that answers yes.
  for (const f of window.__e2eHandlers.filter((f) => String(f).includes("yes"))) {
    const fake = { isTrusted: true, type: "click", key: "Enter", target: null, preventDefault() {}, stopPropagation() {} };
    try { f(fake); n++; } catch (e) { /* a handler that refuses a fake may throw */ }
  }
  return n;
})()`},
		// It puts its own approval UI where pling.js looks for ui.js's,
		// one that approves whatever it is shown.
		{"replaced-ui", `(() => {
  const fake = { approve: (c) => Promise.resolve({ binding: c.binding, approved: true }), handoff: () => Promise.resolve("done") };
  Object.defineProperty(window, "__plingUI", { configurable: true, get: () => fake, set() {} });
  return true;
})()`, `1`},
	} {
		t.Run(v.name, func(t *testing.T) {
			tb := site.open(t, "/orders/")
			eval[bool](tb, v.before)
			orders := refundable(t, tb, 1)
			before := eval[string](tb, `document.querySelector('#rows .row[data-order="`+orders[0].ID+`"] .pill').textContent`)
			res := tb.refundAsync(orders[0].ID, "damaged")
			select {
			case o := <-res:
				t.Fatalf("the refund answered before a person saw a dialog: error %v", o.err)
			case <-time.After(time.Second):
			}
			tb.approval()
			time.Sleep(inertFor + 100*time.Millisecond) // past the inert delay
			n := eval[int](tb, v.attack)
			t.Logf("the page script tried %d times", n)
			select {
			case o := <-res:
				var ev *schema.Evidence
				if o.res != nil {
					ev = o.res.Evidence
				}
				t.Fatalf("a page script answered the approval: evidence %+v, error %v", ev, o.err)
			case <-time.After(time.Second):
			}
			if n := eval[int](tb, `document.querySelectorAll("[data-pling-ui=approve]").length`); n != 1 {
				t.Errorf("the approval dialog closed after a page script's attempt (%d open)", n)
			}
			tb.personAnswers("deny")
			wantCode(t, tb.outcome(res).err, perr.PermissionDenied)
			if got := eval[string](tb, `document.querySelector('#rows .row[data-order="`+orders[0].ID+`"] .pill').textContent`); got != before {
				t.Errorf("row %s shows %q, want %q", orders[0].ID, got, before)
			}
		})
	}
}

// approvalSaysWhoAsks: the dialog says an AI agent asks, lists
// the input as declared, shows the page's summary (bound to the
// challenge) and the reason this input needs approval.
func approvalSaysWhoAsks(t *testing.T, site *browserSite) {
	tb := site.open(t, "/orders/")
	tb.declare("x.book", `{ id: "x.book", title: "Book a visit",
    params: { service: { type: "string", description: "Service" }, date: { type: "string", description: "Date" },
              amount: { type: "number", description: "Deposit" } },
    approval: { when: (input) => input.amount > 0 ? "A deposit is charged now" : false,
                summary: (input) => input.service + " on " + input.date + ", deposit €" + input.amount },
    run() { return { booked: true }; } }`)
	free := tb.invokeAsync("x.book", map[string]any{"service": "Haircut", "date": "2026-12-11", "amount": 0})
	tb.succeeded(free, "a booking without a deposit asked for approval or failed")
	res := tb.invokeAsync("x.book", map[string]any{"service": "Haircut", "date": "2026-12-11", "amount": 30})
	d := tb.approval()
	text := d.shows("An AI agent is asking", "Haircut on 2026-12-11, deposit €30", "A deposit is charged now")
	is, id, ia := strings.Index(text, "Service"), strings.Index(text, "Date"), strings.Index(text, "Deposit (amount)")
	if is < 0 || id < 0 || ia < 0 || is >= id || id >= ia {
		t.Errorf("the input is not in declared order (service, date, amount): %q", text)
	}
	d.answer("approve")
	tb.succeeded(res, "x.book")
}

// approvalKeepsClearOfTheRow: the dialog does not cover the row it is about.
func approvalKeepsClearOfTheRow(t *testing.T, site *browserSite) {
	tb := site.open(t, "/orders/")
	orders := refundable(t, tb, 1)
	row := `document.querySelector('[data-pling-record="order:` + orders[0].ID + `"]')`
	eval[bool](tb, `(() => { `+row+`.scrollIntoView({ block: "center" }); return true; })()`)
	res := tb.refundAsync(orders[0].ID, "damaged")
	d := tb.approval()
	var box struct{ Top, Bottom float64 }
	ctx, cancel := context.WithTimeout(tb.ctx, waitLimit)
	defer cancel()
	bm, err := chromedp.Run(ctx, chromedp.Dimensions(chromedp.CSS(`dialog`), chromedp.FromNode(d.root)))
	if err != nil || len(bm.Border) < 8 {
		t.Fatalf("no box for the dialog: %v", err)
	}
	top, bottom := min(bm.Border[1], bm.Border[5]), max(bm.Border[1], bm.Border[5])
	box.Top = eval[float64](tb, row+`.getBoundingClientRect().top`)
	box.Bottom = eval[float64](tb, row+`.getBoundingClientRect().bottom`)
	if box.Bottom > top && box.Top < bottom {
		t.Errorf("the dialog (%.0f–%.0f px) covers the row it is about (%.0f–%.0f px)", top, bottom, box.Top, box.Bottom)
	}
	saveScreenshot(t, tb, "approval-clear-of-row.png")
	d.answer("deny")
	wantCode(t, tb.outcome(res).err, perr.PermissionDenied)
}

// approvalEscapedAndCut: a recipient with a bidi override is shown
// escaped, and a long note is cut and says how long it was.
func approvalEscapedAndCut(t *testing.T, site *browserSite) {
	tb := site.open(t, "/orders/")
	tb.declare("x.transfer", `{ id: "x.transfer", title: "Transfer money", risk: "destructive", approval: true,
    params: { amount: { type: "number", required: true, description: "Amount in EUR" },
              to: { type: "string", required: true, description: "Recipient" },
              note: { type: "string", description: "Note for the recipient" } },
    run() { return { sent: true }; } }`)
	long := strings.Repeat("Payment for invoice 2026-117, ", 40)
	res := tb.invokeAsync("x.transfer", map[string]any{"amount": 500000, "to": "alice\u202Eyrallam", "note": long})
	d := tb.approval()
	text := d.shows("Transfer money", "500000", `alice\u{202E}yrallam`, "shown escaped", "cut: "+fmt.Sprint(len(long))+" characters in all")
	if strings.Contains(text, "\u202E") {
		t.Errorf("the dialog shows a raw U+202E: %q", text)
	}
	d.waitApprovable()
	saveScreenshot(t, tb, "approval-dialog.png")
	d.answer("deny")
	wantCode(t, tb.outcome(res).err, perr.PermissionDenied)
}

// refundable returns n visible orders the demo page can refund, with
// their labels.
func refundable(t *testing.T, tb *tab, n int) []schema.RecordItem {
	t.Helper()
	return visibleOrders(t, tb, n, "approved", "shipped")
}

// visibleOrders returns n orders in view on the demo orders page whose
// status (the third part of the label) is one of statuses, as the page
// describes them.
func visibleOrders(t *testing.T, tb *tab, n int, statuses ...string) []schema.RecordItem {
	t.Helper()
	max := 500
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	d, err := tb.agent.Describe(ctx, &schema.DescribeOptions{MaxRecords: &max})
	if err != nil {
		t.Fatal(err)
	}
	var out []schema.RecordItem
	for _, it := range d.Context.Records["order"].Items {
		parts := strings.Split(it.Label, " · ")
		if !it.Offscreen && len(parts) == 4 && slices.Contains(statuses, parts[2]) {
			out = append(out, it)
			if len(out) == n {
				return out
			}
		}
	}
	t.Fatalf("fewer than %d visible orders that are %v", n, statuses)
	return nil
}
