package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// nativeWebMCPPage declares a read, a write, a destructive row action and
// one that needs a person's approval.
const nativeWebMCPPage = `<!doctype html><html lang="en"><head><title>Tickets</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>
window.ran = [];
pling.records("ticket", [{ id: "t1", label: "T-0847 Printer jams" }, { id: "t2", label: "T-0848 VPN down" }]);
pling.state("ran", () => window.ran.length);
pling.action({ id: "tickets.search", title: "Search tickets", risk: "read", run: () => ["t1", "t2"] });
pling.action({ id: "note.add", title: "Add a note", params: { text: { type: "string", required: true } },
  run: (i) => { window.ran.push("note"); return true; }, expect: { state: "ran", change: "increase" } });
pling.action({ id: "close", title: "Close ticket", risk: "destructive", record: { kind: "ticket" },
  run: (i, c) => { window.ran.push("close"); return true; } });
pling.action({ id: "wipe", title: "Delete every ticket", risk: "destructive", approval: true,
  run: () => { window.ran.push("wipe"); return true; } });
</script></head><body><h1>Tickets</h1></body></html>`

// TestWebMCPNative runs the mirror against Chromium's own
// document.modelContext (--enable-experimental-web-platform-features):
// titles and annotations as the declarations say, the registered list
// equal to pling.tools(), a call by label through executeTool with a
// short model-facing text, and a cancelled approval that never runs.
func TestWebMCPNative(t *testing.T) {
	tb := openTestPage(t, "/test/webmcp-native.html", nativeWebMCPPage, chromedp.Flag("enable-experimental-web-platform-features", true))
	if !eval[bool](tb, `!!document.modelContext && typeof document.modelContext.executeTool === "function"`) {
		t.Fatal("this Chromium has no native document.modelContext with the flag")
	}

	type tool struct {
		Name, Title string
		Annotations map[string]bool
	}
	const list = `(async () => {
  const mirrored = (await document.modelContext.getTools()).map((t) => ({ name: t.name, title: t.title, annotations: t.annotations })).sort((a, b) => a.name < b.name ? -1 : 1);
  const tools = (await pling.tools()).map((t) => t.name).sort();
  return JSON.stringify({ native: !!(pling._webmcp && pling._webmcp.native), mirrored, tools });
})()`
	var l struct {
		Native   bool
		Mirrored []tool
		Tools    []string
	}
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(50 * time.Millisecond) {
		if err := json.Unmarshal([]byte(eval[string](tb, list)), &l); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range l.Mirrored {
			names = append(names, m.Name)
		}
		if len(l.Tools) == 4 && slices.Equal(names, l.Tools) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the native mirror never equalled pling.tools(): mirrored %+v, tools %v", l.Mirrored, l.Tools)
		}
	}
	if !l.Native {
		t.Error("the mirror did not see the browser's own registerTool")
	}
	ann := func(ro, cons, untrusted bool) map[string]bool {
		return map[string]bool{"readOnlyHint": ro, "consequentialHint": cons, "untrustedContentHint": untrusted, "debugging": false}
	}
	want := []tool{
		{Name: "close__ticket", Title: "Close ticket", Annotations: ann(false, true, false)},
		{Name: "note_add", Title: "Add a note", Annotations: ann(false, false, false)},
		{Name: "tickets_search", Title: "Search tickets", Annotations: ann(true, false, true)},
		{Name: "wipe", Title: "Delete every ticket", Annotations: ann(false, true, false)},
	}
	if diff := cmp.Diff(want, l.Mirrored); diff != "" {
		t.Errorf("native getTools() (-want +got):\n%s", diff)
	}

	// A row action by the label people read, through the browser's
	// executeTool: the text is the one thing the model reads, code first.
	out := tb.executeTool("close__ticket", `{ record: "T-0847" }`)
	if !strings.HasPrefix(out, "OK: close@ticket on t1 ran.") || strings.Contains(out, `"evidence"`) {
		t.Errorf("executeTool by label answered %q", out)
	}
	out = tb.executeTool("note_add", `{ text: "hi" }`)
	if !strings.HasPrefix(out, "OK: note.add ran.\nProof: ran increase met (1 → 2)") {
		t.Errorf("executeTool note_add answered %q", out)
	}

	// What the model reads is shorter than the Surface response it
	// summarizes (before, it got that response twice).
	text := tb.executeTool("tickets_search", `{}`)
	resp := eval[string](tb, `(async () => JSON.stringify(await pling.surface.handle({ protocol: "pling.surface/0.1", id: "size-1", method: "invoke", capability: "tickets.search" })))()`)
	t.Logf("tickets_search: the model reads %d B (%q); the Surface response is %d B", len(text), text, len(resp))
	if !strings.HasPrefix(text, "OK: tickets.search ran.") || len(text) >= len(resp) {
		t.Errorf("tickets_search answered %q (%d B) for a %d B response", text, len(text), len(resp))
	}

	// A cancelled approval: the consumer gives up (executeTool's signal);
	// the dialog closes, and the action never runs.
	eval[bool](tb, `(async () => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === "wipe");
  window.wipeCtl = new AbortController();
  window.wipeOutcome = document.modelContext.executeTool(tool, {}, { signal: wipeCtl.signal }).then((r) => "resolved: " + r, (e) => "rejected: " + e.name);
  return true;
})()`)
	tb.waitJS(`!!document.querySelector("pling-ui[data-pling-ui=approve]")`)
	got := eval[string](tb, `(async () => {
  const events = [];
  document.modelContext.addEventListener("toolcancel", (e) => events.push(e.toolName));
  wipeCtl.abort();
  const outcome = await wipeOutcome;
  return JSON.stringify({ outcome, events });
})()`)
	t.Logf("cancelled call: %s", got)
	if !strings.Contains(got, `"rejected: AbortError"`) {
		t.Errorf("the consumer was not told the call was cancelled: %s", got)
	}
	tb.waitJS(`!document.querySelector("pling-ui[data-pling-ui=approve]")`)
	// Nothing runs afterwards: the run stage is never reached, even a
	// while later.
	time.Sleep(300 * time.Millisecond)
	if ran := eval[string](tb, `JSON.stringify(window.ran)`); ran != `["close","note"]` {
		t.Errorf("ran %s after the cancelled approval, want only close and note", ran)
	}
}

// executeTool calls the page's WebMCP tool name through the browser's
// document.modelContext.executeTool with args (a JavaScript expression)
// and returns the text it answers.
func (tb *tab) executeTool(name, args string) string {
	tb.t.Helper()
	return eval[string](tb, `(async () => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === `+jsString(name)+`);
  return await document.modelContext.executeTool(tool, `+args+`);
})()`)
}

// modelText is the text a model reads in a Pling tool's answer through
// native WebMCP (out, as executeTool gives it): the answer itself for a
// call that ran, the text of MCP's tool error ({content, isError: true},
// failed) for one that failed.
func modelText(out string) (text string, failed bool) {
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	if json.Unmarshal([]byte(out), &r) != nil || !r.IsError || len(r.Content) != 1 {
		return out, false
	}
	return r.Content[0].Text, true
}

// jsString quotes s as a JS string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// nativeFormPage is a page marked up for WebMCP alone (a declarative
// form whose submit handler answers the agent through respondWith), with
// pling.js added.
const nativeFormPage = `<!doctype html><html lang="en"><head><title>Search</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form toolname="search_tickets" tooldescription="Search the tickets. Returns the matching ids" toolautosubmit>
  <label>Query <input name="q" required maxlength="20" toolparamdescription="Words to look for"></label>
  <button>Search</button>
</form>
<script>
window.submits = [];
document.querySelector("form").addEventListener("submit", (e) => {
  e.preventDefault();
  window.submits.push(e.agentInvoked === true);
  if (e.agentInvoked) e.respondWith(Promise.resolve({ found: ["t1"], q: e.target.q.value }));
});
</script></body></html>`

// A WebMCP declarative form gets Pling's path by adding the script: one
// tool under its name (the browser's own declarative tool withdrawn),
// validation from the form's fields, agentInvoked and respondWith as the
// standard defines them, and evidence.
func TestWebMCPNativeDeclarativeForm(t *testing.T) {
	tb := openTestPage(t, "/test/webmcp-form.html", nativeFormPage, chromedp.Flag("enable-experimental-web-platform-features", true))
	const list = `(async () => JSON.stringify({
  mirrored: (await document.modelContext.getTools()).map((t) => t.name + "|" + t.title + "|" + JSON.stringify(t.inputSchema.properties.q || null)),
  tools: (await pling.tools()).map((t) => t.name),
  live: pling._webmcp ? pling._webmcp.tools.size : 0 }))()`
	var l struct {
		Mirrored, Tools []string
		Live            int
	}
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(50 * time.Millisecond) {
		if err := json.Unmarshal([]byte(eval[string](tb, list)), &l); err != nil {
			t.Fatal(err)
		}
		if l.Live == 1 && len(l.Mirrored) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the form never reached the mirror: %+v", l)
		}
	}
	want := []string{`search_tickets|search_tickets|{"type":"string","description":"Words to look for","maxLength":20}`}
	if diff := cmp.Diff(want, l.Mirrored); diff != "" {
		t.Errorf("getTools() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"search_tickets"}, l.Tools); diff != "" {
		t.Errorf("pling.tools() (-want +got):\n%s", diff)
	}
	// Pling validates before the page's code runs.
	if out, failed := modelText(tb.executeTool("search_tickets", `{ q: "this query is far too long to pass" }`)); !failed || !strings.HasPrefix(out, "INVALID_PARAMS:") {
		t.Errorf("an overlong query answered %q (failed %v); want INVALID_PARAMS as a tool error", out, failed)
	}
	out := tb.executeTool("search_tickets", `{ q: "printer" }`)
	if !strings.HasPrefix(out, "OK: search_tickets ran.") || !strings.Contains(out, `Value: {"found":["t1"],"q":"printer"}`) {
		t.Errorf("executeTool answered %q", out)
	}
	if got := eval[string](tb, `JSON.stringify(window.submits)`); got != `[true]` {
		t.Errorf("submits (agentInvoked) %s, want [true]", got)
	}
}

// TestWebMCPApprovalWindow: a WebMCP call's approval lapses with the
// mirror's window (45 s), shorter than the consumers' own time-outs, not
// after the page's approvalTtlMs (5 min): a consumer that gives up above
// the WebMCP layer without cancelling leaves no approval a person could
// give later (runtime TestApprovalEndsWithItsCall: then nothing runs).
func TestWebMCPApprovalWindow(t *testing.T) {
	tb := openTestPage(t, "/test/webmcp-window.html", nativeWebMCPPage, chromedp.Flag("enable-experimental-web-platform-features", true))
	if !eval[bool](tb, `!!document.modelContext && typeof document.modelContext.executeTool === "function"`) {
		t.Fatal("this Chromium has no native document.modelContext with the flag")
	}
	tb.waitJS(`(async () => (await document.modelContext.getTools()).some((t) => t.name === "wipe"))()`)
	eval[bool](tb, `(async () => {
  window.waited = [];
  window.addEventListener("pling:waiting", (e) => window.waited.push(e.detail));
  const tool = (await document.modelContext.getTools()).find((t) => t.name === "wipe");
  window.wipeCtl = new AbortController();
  window.wipeOutcome = document.modelContext.executeTool(tool, {}, { signal: wipeCtl.signal }).catch(() => "");
  return true;
})()`)
	tb.waitJS(`window.waited.length > 0`)
	got := eval[string](tb, `JSON.stringify(window.waited[0])`)
	var w struct {
		Kind      string
		TimeoutMs int64
	}
	if err := json.Unmarshal([]byte(got), &w); err != nil {
		t.Fatal(err)
	}
	t.Logf("the approval waits: %s", got)
	if w.Kind != "approval" || w.TimeoutMs <= 0 || w.TimeoutMs > 45_000 {
		t.Errorf("the WebMCP call's approval waits %d ms (%s), want at most the 45 000 ms window", w.TimeoutMs, got)
	}
	eval[bool](tb, `(wipeCtl.abort(), true)`)
	tb.waitJS(`!document.querySelector("pling-ui[data-pling-ui=approve]")`)
	if ran := eval[string](tb, `JSON.stringify(window.ran)`); ran != `[]` {
		t.Errorf("ran %s", ran)
	}
}

// nativeBookingPage is a WebMCP declarative form whose fields the
// browser's own constraints check: an e-mail address, and a required
// select whose first option is its "" placeholder.
const nativeBookingPage = `<!doctype html><html lang="en"><head><title>Book</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form toolname="book_class" tooldescription="Book a class" toolautosubmit>
  <label>E-mail <input name="email" type="email" required></label>
  <label>Level <select name="level" required><option value="">Choose a level</option><option value="beginner">Beginner</option><option value="advanced">Advanced</option></select></label>
  <button>Book</button>
</form>
<script>
window.submits = [];
document.querySelector("form").addEventListener("submit", (e) => {
  e.preventDefault();
  window.submits.push(e.target.email.value + "|" + e.target.level.value);
  if (e.agentInvoked) e.respondWith(Promise.resolve("booked"));
});
</script></body></html>`

// TestWebMCPNativeDeclarativeFormRefused: a declarative form filled with
// values the browser's own constraints refuse answers INVALID_PARAMS
// with the browser's message at the field's path, and is not submitted;
// a required select's "" placeholder is not offered as a level.
func TestWebMCPNativeDeclarativeFormRefused(t *testing.T) {
	tb := openTestPage(t, "/test/webmcp-booking.html", nativeBookingPage, chromedp.Flag("enable-experimental-web-platform-features", true))
	levels := ""
	for deadline := time.Now().Add(waitLimit); levels == ""; time.Sleep(50 * time.Millisecond) {
		levels = eval[string](tb, `(async () => { const t = (await document.modelContext.getTools()).find((t) => t.name === "book_class");
  return t ? JSON.stringify(t.inputSchema.properties.level.enum) : ""; })()`)
		if levels == "" && time.Now().After(deadline) {
			t.Fatal("book_class never reached the mirror")
		}
	}
	if levels != `["beginner","advanced"]` {
		t.Errorf("the levels offered are %s, want the select's options without its \"\" placeholder", levels)
	}
	out, failed := modelText(tb.executeTool("book_class", `{ email: "not an address", level: "beginner" }`))
	if !failed || !strings.HasPrefix(out, "INVALID_PARAMS:") || !strings.Contains(out, "/email") || !strings.Contains(out, "the page says") {
		t.Errorf("an e-mail the browser refuses answered %q (failed %v); want INVALID_PARAMS at /email with the browser's message, as a tool error", out, failed)
	}
	if got := eval[string](tb, `JSON.stringify(window.submits)`); got != `[]` {
		t.Errorf("the form was submitted with values the browser refuses: %s", got)
	}
	if out := tb.executeTool("book_class", `{ email: "ana@example.com", level: "beginner" }`); !strings.HasPrefix(out, "OK: book_class ran.") {
		t.Errorf("a valid booking answered %q", out)
	}
	if got := eval[string](tb, `JSON.stringify(window.submits)`); got != `["ana@example.com|beginner"]` {
		t.Errorf("submits %s", got)
	}
}

// TestWebMCPDeclarativeFormTitle: a declarative form's tool is titled
// only with what the page said: its tooltitle (as the WebMCP polyfill
// reads it), else its name; never the first sentence of its
// tooldescription, which the description says in full, once.
func TestWebMCPDeclarativeFormTitle(t *testing.T) {
	tb := openTestPage(t, "/test/webmcp-titles.html", `<!doctype html><html lang="en"><head><title>Classes</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form toolname="book_class" tooldescription="Book a class. Pick a level first." toolautosubmit><input name="level"><button>Book</button></form>
<form toolname="cancel_class" tooltitle="Class cancellation" tooldescription="Cancel a class." toolautosubmit><input name="id"><button>Cancel</button></form>
</body></html>`, chromedp.Flag("enable-experimental-web-platform-features", true))
	got := ""
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(50 * time.Millisecond) {
		got = eval[string](tb, `(async () => { const ts = (await document.modelContext.getTools()).filter((t) => /_class$/.test(t.name));
  return ts.length < 2 ? "" : JSON.stringify(Object.fromEntries(ts.map((t) => [t.name, [t.title || "", t.description]]))); })()`)
		if got != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the declarative forms never reached the mirror")
		}
	}
	var tools map[string][2]string
	if err := json.Unmarshal([]byte(got), &tools); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct{ title, says string }{
		"book_class":   {"book_class", "Book a class. Pick a level first."},
		"cancel_class": {"Class cancellation", "Cancel a class."},
	} {
		tl := tools[name]
		if tl[0] != want.title || strings.Count(tl[1], want.says) != 1 || strings.Count(tl[1], strings.Split(want.says, ".")[0]) != 1 {
			t.Errorf("%s: title %q, description %q; want the title %q and %q said once", name, tl[0], tl[1], want.title, want.says)
		}
	}
}
