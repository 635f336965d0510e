package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// navigatingPage has tools whose run ends the document: a markup form
// that posts to this origin, a handler that clicks a form's named submit
// button, a handler that calls location.assign and works on; one
// that does not navigate; and a slow one, during which the person follows
// a link.
const navigatingPage = `<!doctype html><html lang="en"><head><title>Contact</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form data-pling-action="contact.send" data-pling-title="Send a message" action="/test/nav/thanks" method="post">
<label>Name <input name="name" data-pling-param required></label> <button>Send</button></form>
<form id="order" action="/test/nav/placed" method="post"><input name="item" value="tea"> <button id="place" name="how" value="express">Place</button></form>
<a id="elsewhere" href="/test/nav/elsewhere">Elsewhere</a>
<script>
pling.action({ id: "help.open", title: "Open help", run: () => { location.assign("/test/nav/help?from=tool"); return new Promise((r) => setTimeout(() => r(true), 300)); } });
pling.action({ id: "order.place", title: "Place the order", run: () => { document.getElementById("place").click(); return true; } });
pling.action({ id: "count", title: "Count", risk: "read", run: () => 1 });
pling.action({ id: "wait", title: "Wait a while", risk: "read", run: () => { window.waiting = true; return new Promise((r) => setTimeout(() => r(true), 8000)); } });
</script></body></html>`

// TestWebMCPNavigatingTool calls, through Playwright MCP, Chrome
// DevTools MCP and Stagehand attached to a Chromium with native WebMCP, mirrored tools
// whose run navigates: the consumer gets Pling's answer with the line
// saying where the page goes, and the navigation then happens once (the
// server receives the form's values with the submitter's, the handler's
// page). A call that
// does not navigate answers as before, and a link the person follows
// while a call runs is not held.
func TestWebMCPNavigatingTool(t *testing.T) {
	eachWebMCPConsumer(t, func(t *testing.T, d string, c webmcpConsumerKind) {
		// What the server received, by path: the posted name, or the query.
		got := make(chan string, 16)
		extra := http.NewServeMux()
		extra.HandleFunc("/test/nav/form", staticPage(navigatingPage))
		extra.HandleFunc("/test/nav/", func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			got <- r.Method + " " + r.URL.Path + " " + r.Form.Encode()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<!doctype html><title>Done</title><p>Done</p>`))
		})
		site, ctx, mc := c.onSite(t, d, extra)
		open := func() {
			t.Helper()
			mc.openFor(t, ctx, c.name, site.url+"/test/nav/form", "contact_send")
		}
		received := func(want string) {
			t.Helper()
			select {
			case r := <-got:
				if r != want {
					t.Errorf("the server received %q, want %q", r, want)
				}
			case <-time.After(waitLimit):
				t.Errorf("the server never received %q", want)
			}
		}

		for _, nav := range []struct {
			tool     string
			args     map[string]any
			ran, to  string
			received string
		}{
			{"contact_send", map[string]any{"name": "Ada Lovelace"}, "OK: contact.send ran.", "/test/nav/thanks", "POST /test/nav/thanks name=Ada+Lovelace"},
			{"order_place", map[string]any{}, "OK: order.place ran.", "/test/nav/placed", "POST /test/nav/placed how=express&item=tea"},
			{"help_open", map[string]any{}, "OK: help.open ran.", "/test/nav/help?from=tool", "GET /test/nav/help from=tool"},
		} {
			open()
			out, err := mc.call(ctx, nav.tool, nav.args)
			t.Logf("%s: %q", nav.tool, out)
			line := "The page goes to " + nav.to + " once this answer is sent."
			if err != nil || !strings.Contains(out, nav.ran) || !strings.Contains(out, line) {
				t.Errorf("%s answered %q, %v; want %q and %q", nav.tool, out, err, nav.ran, line)
			}
			received(nav.received)
		}

		// A call that does not navigate: Pling's answer, no line.
		open()
		out, err := mc.call(ctx, "count", map[string]any{})
		if err != nil || !strings.Contains(out, "OK: count ran.") || strings.Contains(out, "goes to") {
			t.Errorf("count answered %q, %v; want it ran, with no navigation line", out, err)
		}

		// A link the person follows while a call runs goes at once.
		person := site.attachTab(t, "/test/nav/form")
		done := make(chan callOutcome, 1)
		callCtx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			out, err := mc.call(callCtx, "wait", map[string]any{})
			done <- callOutcome{out, err}
		}()
		person.waitJS(`window.waiting === true`) // the call is in its 8 s run
		person.do(chromedp.Click(chromedp.CSS("#elsewhere")))
		select {
		case r := <-got:
			if r != "GET /test/nav/elsewhere " {
				t.Errorf("the server received %q, want the person's link", r)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("the person's link was not followed while the call ran")
		}
		// What the consumer then answers is its own (the document it
		// called into is gone): the test stops waiting for it.
		stop()
		<-done
	})
}
