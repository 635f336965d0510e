package e2e

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/schema"
)

// handoffPage hands a payment to the person: the handler opens the
// bank's window and can only say that it did; the person types the
// bank's code there and confirms; handoff.result reads what they
// confirmed.
var handoffPage = plingPage("Pay", `<dialog id="bank"><form method="dialog"><label>Bank code <input id="code" autocomplete="off"></label><button id="ok">Confirm</button></form></dialog>
<output id="status">idle</output>
<script>
  var confirmed = "";
  document.getElementById("bank").addEventListener("close", function () {
    confirmed = document.getElementById("code").value;
    document.getElementById("status").textContent = "paid";
  });
  pling.state("status", function () { return document.getElementById("status").textContent; });
  pling.action({
    id: "pay", title: "Pay",
    handoff: { prompt: "Enter the bank's code, confirm, then press Done.", timeoutMs: 60000,
      result: function () { return { code: confirmed }; } },
    run: function () { document.getElementById("bank").show(); return { code: confirmed }; },
    expect: { state: "status", equals: "paid" },
  });
</script>`)

// plingPage is a test page titled title that loads pling.js exposing
// everything, with body.
func plingPage(title, body string) string {
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>` + title + `</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
` + body + `
</body></html>`
}

// TestHandoffValueIsThePersons: the value an agent receives from a
// handoff is read after the person acted (handoff.result), so it is the
// code the person typed, not the empty one the handler saw before they
// were asked.
func TestHandoffValueIsThePersons(t *testing.T) {
	tb := openHTML(t, "/test/handoff.html", handoffPage)
	tb.describeUntil("pay", func(d *schema.SurfaceDescription) bool { return capability(d, "pay") != nil })
	res := tb.invokeAsync("pay", nil)
	tb.do(chromedp.WaitVisible(chromedp.CSS(handoffDialog)), chromedp.WaitVisible(chromedp.CSS("#bank")))
	o := tb.personConfirms(res, "#bank", "#code", "482913", "#ok")
	if got := string(o.res.Value); got != `{"code":"482913"}` {
		t.Errorf("value %s, want the code the person confirmed, {\"code\":\"482913\"}", got)
	}
}

// personConfirms is the person's side of a handoff whose page opened its
// own window (a <dialog>): type value into field, press confirm, and once
// the window closed answer the handoff dialog's Done; it returns the
// call's outcome, which must have succeeded with the handoff done.
func (tb *tab) personConfirms(res <-chan invokeOutcome, window, field, value, confirm string) invokeOutcome {
	tb.t.Helper()
	tb.do(chromedp.SendKeys(chromedp.CSS(field), value), chromedp.Click(chromedp.CSS(confirm)))
	tb.waitJS(`!document.querySelector(` + strconv.Quote(window) + `).open`)
	tb.do(chromedp.Click(chromedp.CSS(handoffDialog + answerYes)))
	o := tb.succeeded(res, "the call after the handoff")
	if o.res.Evidence == nil || o.res.Evidence.Handoff != "done" {
		tb.t.Errorf("evidence %+v, want handoff done", o.res.Evidence)
	}
	return o
}
