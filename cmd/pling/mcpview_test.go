package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pling-go/pling/internal/testing/demotest"
)

// The view's acceptance: pages without Pling or WebMCP (a form, a table
// with sort and pagination, a dialog) and a Pling page with controls it
// does not declare, driven through the pling binary over stdio by the
// official Go SDK's client, with only the view's tools.

// viewSecrets are values the form page holds in fields whose value the
// view must never read back.
var viewSecrets = []string{"hunter2-secret", "4111111111111111", "923451"}

const viewFormPage = `<!doctype html><html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<form id="f">
<label>Name <input name="name"></label>
<label>Password <input type="password" name="pw" value="hunter2-secret"></label>
<label>Card <input name="card" autocomplete="cc-number" value="4111111111111111"></label>
<label>Code <input name="code" autocomplete="one-time-code" value="923451"></label>
<label>Country <select name="country"><option value="">Choose</option><option value="fr">France</option><option value="nl">Netherlands</option></select></label>
<label><input type="checkbox" name="terms"> I accept the terms</label>
<button type="submit">Create account</button>
</form>
<button id="off" disabled>Archive</button>
<div style="position:relative"><button id="under">Hidden behind</button><div style="position:absolute;inset:0;background:#fff">cover</div></div>
<p id="out"></p>
<a href="/table.html">Products</a> <a href="PARTNER/table.html">Partner</a>
<script>
document.getElementById("f").addEventListener("submit", (e) => {
  e.preventDefault();
  const d = new FormData(e.target);
  if (!d.get("terms")) { document.getElementById("out").textContent = "Accept the terms first"; return; }
  const msg = "Welcome " + d.get("name") + " from " + d.get("country");
  document.getElementById("out").textContent = msg;
  fetch("/ran", { method: "POST", body: msg });
});
</script></body></html>`

const viewTablePage = `<!doctype html><html><head><title>Products</title></head><body>
<h1>Products</h1>
<table><thead><tr><th><button id="by-name">Name</button></th><th><button id="by-price">Price</button></th></tr></thead><tbody id="rows"></tbody></table>
<p>Page <span id="pg">1</span> of 2 <button id="prev">Previous</button> <button id="next">Next</button></p>
<button id="del">Delete the cheapest</button>
<dialog id="dlg"><p>Delete it for good?</p><button id="yes">Confirm</button> <button id="no">Cancel</button></dialog>
<p id="out" role="status"></p>
<script>
let items = [["Teapot", 30], ["Mug", 8], ["Kettle", 45], ["Spoon", 3], ["Tray", 12], ["Jar", 20]];
let page = 0, per = 3;
function draw() {
  document.getElementById("rows").innerHTML = items.slice(page * per, page * per + per).map(([n, p]) => "<tr><td>" + n + "</td><td>" + p + " EUR</td></tr>").join("");
  document.getElementById("pg").textContent = page + 1;
}
document.getElementById("by-name").onclick = () => { items.sort((a, b) => a[0].localeCompare(b[0])); page = 0; draw(); };
document.getElementById("by-price").onclick = () => { items.sort((a, b) => a[1] - b[1]); page = 0; draw(); };
document.getElementById("next").onclick = () => { if (page < 1) page++; draw(); };
document.getElementById("prev").onclick = () => { if (page > 0) page--; draw(); };
document.getElementById("del").onclick = () => document.getElementById("dlg").showModal();
document.getElementById("no").onclick = () => document.getElementById("dlg").close();
document.getElementById("yes").onclick = () => {
  const cheapest = items.slice().sort((a, b) => a[1] - b[1])[0];
  items = items.filter((x) => x !== cheapest);
  document.getElementById("dlg").close();
  document.getElementById("out").textContent = "Deleted " + cheapest[0];
  fetch("/ran", { method: "POST", body: "deleted " + cheapest[0] });
  draw();
};
draw();
</script></body></html>`

// viewPlingPage speaks Pling: it declares adding a note (markup) but
// neither its "Reset filters" button nor its column sort.
const viewPlingPage = `<!doctype html><html><head><title>Notes</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<h1>Notes</h1>
<form data-pling-action="note.add" data-pling-title="Add a note">
<label>Text <input name="text" data-pling-param></label>
<button type="submit">Add</button>
</form>
<label>Filter <input id="filter" value="urgent"></label>
<button id="reset">Reset filters</button>
<table><thead><tr><th><button id="sort">Title</button></th></tr></thead><tbody id="rows"><tr><td>b-note</td></tr><tr><td>a-note</td></tr></tbody></table>
<p id="out"></p>
<script>
document.querySelector("form").addEventListener("submit", (e) => e.preventDefault());
document.getElementById("reset").onclick = () => { document.getElementById("filter").value = ""; document.getElementById("out").textContent = "Filters reset"; fetch("/ran", { method: "POST", body: "reset" }); };
document.getElementById("sort").onclick = () => { document.getElementById("rows").innerHTML = "<tr><td>a-note</td></tr><tr><td>b-note</td></tr>"; document.getElementById("out").textContent = "Sorted by title"; };
</script></body></html>`

// viewSite serves the pages and records what their scripts report.
type viewSite struct {
	url string
	ran bodyLog
}

func (s *viewSite) reports() []string { return s.ran.bodies() }

func newViewSite(t *testing.T, host string, partner func() string) *viewSite {
	t.Helper()
	s := &viewSite{ran: bodyLog{limit: 4096}}
	mux := http.NewServeMux()
	mux.Handle("/pling/", http.StripPrefix("/pling/", http.FileServer(http.Dir(demotest.Dist(t)))))
	mux.HandleFunc("GET /form.html", htmlPage(func() string { return strings.Replace(viewFormPage, "PARTNER", partner(), 1) }))
	mux.HandleFunc("GET /table.html", htmlPage(func() string { return viewTablePage }))
	mux.HandleFunc("GET /notes.html", htmlPage(func() string { return viewPlingPage }))
	mux.HandleFunc("POST /ran", s.ran.handle)
	s.url = serveAt(t, host, mux)
	return s
}

// refOf finds the ref of the view's line with role and quoted name.
func refOf(t *testing.T, view, role, name string) string {
	t.Helper()
	q, _ := json.Marshal(name)
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(role+" "+string(q)) + ` (e\d+)`)
	m := re.FindStringSubmatch(view)
	if m == nil {
		t.Fatalf("the view has no %s %s:\n%s", role, q, view)
	}
	return m[1]
}

// TestMCPViewPageWithoutPling: on pages that neither speak Pling nor
// register WebMCP tools, a scripted agent signs up through a form, sorts
// and pages a table and confirms a dialog with the view's tools only;
// secret fields are never read back, a hidden, disabled or covered
// control is refused with its reason, a ref from before a navigation is
// refused, and nothing is read or done on a page outside the allowed
// origins.
func TestMCPViewPageWithoutPling(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pling and drives Chromium: not in -short mode")
	}
	var partner *viewSite
	site := newViewSite(t, "localhost", func() string { return partner.url })
	partner = newViewSite(t, "127.0.0.1", func() string { return site.url })
	pp := startPlingProcess(t, buildPling(t), nil, "mcp", site.url+"/form.html")
	var said []string // every text pling mcp returned
	call := func(t *testing.T, name string, args map[string]any) (string, bool) {
		t.Helper()
		out, res := pp.call(t, name, args)
		said = append(said, out)
		return out, res.IsError
	}
	mustCall := func(t *testing.T, name string, args map[string]any) string {
		t.Helper()
		out, isErr := call(t, name, args)
		if isErr {
			t.Fatalf("%s %v failed: %s", name, args, out)
		}
		return out
	}

	t.Run("form", func(t *testing.T) {
		view := mustCall(t, "browser.view", nil)
		t.Logf("the form's view:\n%s", view)
		for _, want := range []string{`textbox "Password" `, `(password: not read)`, `(payment: not read)`, `(one-time code: not read)`, `button "Archive" `} {
			if !strings.Contains(view, want) {
				t.Errorf("the view lacks %q", want)
			}
		}
		mustCall(t, "browser.act", map[string]any{"do": "fill", "ref": refOf(t, view, "textbox", "Name"), "text": "Ada"})
		if out := mustCall(t, "browser.act", map[string]any{"do": "select", "ref": refOf(t, view, "combobox", "Country"), "text": "France"}); !strings.Contains(out, `"France"`) {
			t.Errorf("browser.select says %q", out)
		}
		if out := mustCall(t, "browser.act", map[string]any{"do": "check", "ref": refOf(t, view, "checkbox", "I accept the terms")}); !strings.HasPrefix(out, "Checked ") {
			t.Errorf("browser.check says %q", out)
		}
		terms := refOf(t, view, "checkbox", "I accept the terms")
		if out := mustCall(t, "browser.act", map[string]any{"do": "check", "ref": terms}); !strings.Contains(out, "checked already") {
			t.Errorf("checking a checked box says %q", out)
		}
		// Enter in the name field submits the form, as a person's would.
		out := mustCall(t, "browser.act", map[string]any{"do": "press", "ref": refOf(t, view, "textbox", "Name"), "text": "Enter"})
		if !strings.Contains(out, "not proven by the page") || !strings.Contains(out, `"Welcome Ada from fr"`) {
			t.Errorf("the click's result does not say it is unproven, or lacks the page's change:\n%s", out)
		}
		if got := site.reports(); !slices.Contains(got, "Welcome Ada from fr") {
			t.Errorf("the page reported %v, want the sign-up", got)
		}
		if out := mustCall(t, "browser.act", map[string]any{"do": "uncheck", "ref": terms}); !strings.HasPrefix(out, "Unchecked ") || !strings.Contains(out, "unchecked") {
			t.Errorf("unchecking says %q", out)
		}
		out = mustCall(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, "button", "Create account")})
		if !strings.Contains(out, `"Accept the terms first"`) {
			t.Errorf("the click on Create account without the terms:\n%s", out)
		}
		// Typed into a password field, and still not read back.
		mustCall(t, "browser.act", map[string]any{"do": "fill", "ref": refOf(t, view, "textbox", "Password"), "text": "typed-secret-77"})
		again := mustCall(t, "browser.view", nil)
		if strings.Contains(again, "typed-secret-77") {
			t.Errorf("the view reads back what was typed into the password field:\n%s", again)
		}
	})

	t.Run("not actionable", func(t *testing.T) {
		view := mustCall(t, "browser.view", map[string]any{"full": true})
		for _, c := range []struct{ name, why string }{
			{"Archive", "it is disabled"},
			{"Hidden behind", "another element (div) would receive the click"},
		} {
			out, isErr := call(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, "button", c.name)})
			if !isErr || !strings.HasPrefix(out, "NOT_ACTIONABLE: ") || !strings.Contains(out, c.why) {
				t.Errorf("a click on %q answered (error %v) %q; want NOT_ACTIONABLE saying %q", c.name, isErr, out, c.why)
			}
		}
		if out, isErr := call(t, "browser.act", map[string]any{"do": "click", "ref": "e999999"}); !isErr || !strings.HasPrefix(out, "UNKNOWN_REF: ") {
			t.Errorf("a ref no view gave answered (error %v) %q", isErr, out)
		}
	})

	var tableRef string
	t.Run("table and dialog", func(t *testing.T) {
		mustCall(t, "browser.open", map[string]any{"url": "/table.html"})
		view := mustCall(t, "browser.view", nil)
		tableRef = refOf(t, view, "button", "Next")
		out := mustCall(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, "button", "Price")})
		if !strings.Contains(out, `"Spoon"`) {
			t.Errorf("sorting by price: the result does not show the cheapest first:\n%s", out)
		}
		out = mustCall(t, "browser.act", map[string]any{"do": "click", "ref": tableRef})
		if !strings.Contains(out, `"Jar"`) || !strings.Contains(out, `"2"`) {
			t.Errorf("page 2 by price: the result lacks Jar:\n%s", out)
		}
		out = mustCall(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, "button", "Delete the cheapest")})
		if !strings.Contains(out, "dialog") {
			t.Errorf("the dialog's opening is not in the result:\n%s", out)
		}
		// The dialog came in the click's result: its buttons' refs too.
		mustCall(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, out, "button", "Confirm")})
		if out := mustCall(t, "browser.act", map[string]any{"do": "wait", "text": "Deleted Spoon"}); !strings.Contains(out, "shows on the page") {
			t.Errorf("wait: %s", out)
		}
		if out := mustCall(t, "browser.act", map[string]any{"do": "wait_gone", "text": "Delete it for good?"}); !strings.Contains(out, "is gone from the page") {
			t.Errorf("wait_gone for the closed dialog: %s", out)
		}
		if out, isErr := call(t, "browser.act", map[string]any{"do": "wait", "text": "Not on this page", "ref": ""}); !isErr || !strings.HasPrefix(out, "TIMEOUT: ") {
			t.Errorf("wait for a text that never shows answered (error %v) %q", isErr, out)
		}
		if got := site.reports(); !slices.Contains(got, "deleted Spoon") {
			t.Errorf("the page reported %v, want the deletion", got)
		}
	})

	t.Run("stale ref after navigation", func(t *testing.T) {
		mustCall(t, "browser.open", map[string]any{"url": "/table.html"}) // a new document of the same URL
		out, isErr := call(t, "browser.act", map[string]any{"do": "click", "ref": tableRef})
		if !isErr || !strings.HasPrefix(out, "STALE_REF: ") {
			t.Errorf("a ref from before the navigation answered (error %v) %q", isErr, out)
		}
	})

	t.Run("outside the allowed origins", func(t *testing.T) {
		mustCall(t, "browser.open", map[string]any{"url": "/form.html"})
		view := mustCall(t, "browser.view", nil)
		name := refOf(t, view, "textbox", "Name")
		out := mustCall(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, "link", "Partner")})
		if !strings.Contains(out, partner.url) {
			t.Fatalf("the click on the partner link does not say the tab went there: %s", out)
		}
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"browser.view", nil},
			{"browser.act", map[string]any{"do": "fill", "ref": name, "text": "x"}},
			{"browser.act", map[string]any{"do": "press", "text": "Enter"}},
			{"browser.act", map[string]any{"do": "wait", "text": "Products"}},
		} {
			out, isErr := call(t, c.tool, c.args)
			if !isErr || !strings.HasPrefix(out, "ORIGIN_NOT_ALLOWED: ") {
				t.Errorf("%s on a page outside the allowed origins answered (error %v) %q", c.tool, isErr, out)
			}
		}
		if got := partner.reports(); len(got) > 0 {
			t.Errorf("the page outside the allowed origins reported %v", got)
		}
	})

	for _, out := range said {
		for _, secret := range viewSecrets {
			if strings.Contains(out, secret) {
				t.Errorf("pling mcp returned a secret field's value %q:\n%s", secret, out)
			}
		}
	}
}

// TestMCPViewOnPlingPage: on a page that speaks Pling, the view marks the
// controls a declared tool covers ("use note_add") and reaches the ones
// the page does not declare (a reset button, a column sort), while the
// declared tool stays listed and the instructions say to prefer it.
func TestMCPViewOnPlingPage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pling and drives Chromium: not in -short mode")
	}
	site := newViewSite(t, "localhost", func() string { return "" })
	pp := startPlingProcess(t, buildPling(t), nil, "mcp", site.url+"/notes.html")
	pp.waitTool(t, "note_add")
	if ins := pp.cs.InitializeResult().Instructions; !strings.Contains(ins, "Prefer them, then webmcp.*, then browser.view and browser.act") {
		t.Errorf("the instructions do not say to prefer the page's tools: %s", ins)
	}
	view, res := pp.call(t, "browser.view", nil)
	if res.IsError {
		t.Fatalf("browser.view: %s", view)
	}
	t.Logf("view:\n%s", view)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`button "Add" e\d+ \(use note_add\)`),
		regexp.MustCompile(`textbox "Text" e\d+ \(use note_add\)`),
	} {
		if !want.MatchString(view) {
			t.Errorf("the view does not mark the declared control (%s)", want)
		}
	}
	if regexp.MustCompile(`"Reset filters" e\d+ \(use`).MatchString(view) {
		t.Errorf("the view marks the undeclared reset button as declared")
	}
	out, _ := pp.call(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, "button", "Reset filters")})
	if !strings.Contains(out, `"Filters reset"`) || !strings.Contains(out, "not proven by the page") {
		t.Errorf("the reset through the view:\n%s", out)
	}
	out, _ = pp.call(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, "button", "Title")})
	if !strings.Contains(out, `"Sorted by title"`) {
		t.Errorf("the sort through the view:\n%s", out)
	}
	if got := site.reports(); !slices.Contains(got, "reset") {
		t.Errorf("the page reported %v, want the reset", got)
	}
	pp.waitTool(t, "note_add") // still listed after the view's actions
}
