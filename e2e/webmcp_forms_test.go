package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// clubPage is a WebMCP declarative form that the person has filled in
// (its values are in the markup) and whose submit handler checks what
// the agent sent, as a page does: it names the field it refuses with
// setCustomValidity (then rejects respondWith, at once or after a
// while, or rejects nothing and reports the field), rejects with a
// plain Error that names no field, or rejects (or answers) with
// pling.fail naming the field. Each field's own input handler clears
// its message, as a page whose check runs at submit does.
const clubPage = `<!doctype html><html lang="en"><head><title>Club</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form toolname="join_club" tooldescription="Join the club" toolautosubmit>
  <label>E-mail <input name="email" type="email" required value="ana@example.com" oninput="this.setCustomValidity('')"></label>
  <label>Who <input name="who" value="Ana" oninput="this.setCustomValidity('')"></label>
  <button>Join</button>
</form>
<script>
window.submits = [];
document.querySelector("form").addEventListener("submit", (e) => {
  e.preventDefault();
  const f = e.target, email = f.email.value, who = f.who.value;
  window.submits.push(email + "|" + who);
  if (!e.agentInvoked) return;
  if (email.endsWith("@taken.example")) {
    f.email.setCustomValidity("That address is taken");
    e.respondWith(Promise.reject(new Error("That address is taken")));
  } else if (email.endsWith("@later.example")) {
    e.respondWith(new Promise((ok) => setTimeout(ok, 100)).then(() => {
      f.email.setCustomValidity("That address cannot join yet");
      throw new Error("That address cannot join yet");
    }));
  } else if (email.endsWith("@slow.example")) {
    e.respondWith(new Promise((ok) => setTimeout(ok, 1500)).then(() => {
      f.email.setCustomValidity("That address is still being checked");
      throw new Error("That address is still being checked");
    }));
  } else if (email.endsWith("@blocked.example")) {
    f.email.setCustomValidity("That address is on the blocklist");
    f.email.reportValidity();
  } else if (who === "Crash") {
    e.respondWith(Promise.reject(new Error("The club's server did not answer")));
  } else if (who === "Taken") {
    e.respondWith(Promise.reject(pling.fail("INVALID_PARAMS", "That name is taken", { path: "/who" })));
  } else if (who === "Reserved") {
    e.respondWith(Promise.resolve(pling.fail("INVALID_PARAMS", "That name is reserved", { path: "/who" })));
  } else {
    e.respondWith(Promise.resolve("joined"));
  }
});
</script></body></html>`

// TestWebMCPDeclarativeFormPageRefused: a declarative form whose page
// refuses the agent's values in its own submit handler answers
// INVALID_PARAMS naming the field the page named (setCustomValidity, at
// once or after an awaited check, with or without respondWith; a
// pling.fail path, rejected or answered), with the page's message, and
// gives the person's values back; a rejection that names no field is
// EXECUTION_FAILED with the page's message, never "Observe the page",
// and also leaves the person's values. No refused call says the tools
// changed: while the page checks, the agent's values in the form are not
// the tool's defaults. A call the page accepts leaves
// the agent's values, as a person's own submit does.
func TestWebMCPDeclarativeFormPageRefused(t *testing.T) {
	tb := openTestPage(t, "/test/webmcp-club.html", clubPage, chromedp.Flag("enable-experimental-web-platform-features", true))
	tb.waitJS(`(async () => (await document.modelContext.getTools()).some((t) => t.name === "join_club"))()`)
	exec := func(args string) string {
		return eval[string](tb, `(async () => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === "join_club");
  return await document.modelContext.executeTool(tool, `+args+`);
})()`)
	}
	const form = `JSON.stringify([document.forms[0].email.value, document.forms[0].who.value, document.forms[0].checkValidity()])`
	for _, c := range []struct {
		name, args string
		want       []string // what the answer starts with, then what it says
	}{
		{"named at once", `{ email: "bo@taken.example", who: "Bo" }`, []string{"INVALID_PARAMS:", `"/email"`, "That address is taken"}},
		{"named after a check", `{ email: "bo@later.example", who: "Bo" }`, []string{"INVALID_PARAMS:", `"/email"`, "That address cannot join yet"}},
		// Longer than the mirror's one-second look at the forms, which
		// runs while the form holds the agent's values.
		{"named after a long check", `{ email: "bo@slow.example", who: "Bo" }`, []string{"INVALID_PARAMS:", `"/email"`, "That address is still being checked"}},
		{"reported without respondWith", `{ email: "bo@blocked.example", who: "Bo" }`, []string{"INVALID_PARAMS:", `"/email"`, "That address is on the blocklist"}},
		{"pling.fail with a path", `{ email: "bo@example.com", who: "Taken" }`, []string{"INVALID_PARAMS:", `"/who"`, "That name is taken"}},
		{"pling.fail answered", `{ email: "bo@example.com", who: "Reserved" }`, []string{"INVALID_PARAMS:", `"/who"`, "That name is reserved"}},
		{"no field named", `{ email: "bo@example.com", who: "Crash" }`, []string{"EXECUTION_FAILED:", "The club's server did not answer"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := tb.on(t)
			out, failed := modelText(exec(c.args))
			if !failed || !strings.HasPrefix(out, c.want[0]) || strings.Contains(out, "Observe the page") {
				t.Errorf("answered %q (failed %v); want %s as a tool error, without \"Observe the page\"", out, failed, c.want[0])
			}
			// The call changed no tool: the agent's values in the form
			// while the page checked them were never its defaults.
			if strings.Contains(out, "tools changed") {
				t.Errorf("answered %q; the refused call changed no tool", out)
			}
			for _, w := range c.want[1:] {
				if !strings.Contains(out, w) {
					t.Errorf("answered %q; want it to say %s", out, w)
				}
			}
			if diff := cmp.Diff(`["ana@example.com","Ana",true]`, eval[string](tb, form)); diff != "" {
				t.Errorf("the form after the refused call, [email, who, valid] (-the person's +got):\n%s", diff)
			}
		})
	}
	if out := exec(`{ email: "bo@example.com", who: "Bo" }`); !strings.HasPrefix(out, "OK: join_club ran.") || !strings.Contains(out, `Value: "joined"`) {
		t.Errorf("a call the page accepts answered %q", out)
	}
	if got := eval[string](tb, form); got != `["bo@example.com","Bo",true]` {
		t.Errorf("after a call the page accepted the form holds %s, want the agent's values", got)
	}
}

// prefillLaterPage is a WebMCP declarative form the page fills by
// script (fill, as after its own fetch): values set on the fields, no
// event, no mutation.
const prefillLaterPage = `<!doctype html><html lang="en"><head><title>Profile</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form toolname="profile_save" tooldescription="Save the profile" toolautosubmit
  onsubmit="event.preventDefault(); if (event.agentInvoked) event.respondWith(Promise.resolve('saved'))">
  <label>E-mail <input name="email" type="email" required></label>
  <label>City <input name="city" required></label>
  <button>Save</button>
</form>
<label>Filter the rows <input id="filter"></label>
<script>
window.fill = (email, city) => { const f = document.forms[0]; f.email.value = email; f.city.value = city; };
</script></body></html>`

// TestWebMCPMirrorFormDefaultsNow: the mirror lists a declarative form
// with the values it holds now as defaults (no filled field required),
// without a describe or a call in between: for a consumer that calls
// getTools in the page's script context, at once; for one that reads the
// browser's own list from elsewhere (an isolated world, as Playwright
// MCP does, or DevTools' WebMCP domain), within the mirror's re-read
// interval.
func TestWebMCPMirrorFormDefaultsNow(t *testing.T) {
	tb := openTestPage(t, "/test/webmcp-prefill.html", prefillLaterPage, chromedp.Flag("enable-experimental-web-platform-features", true))
	const props = `(async (list) => { const t = (await list).find((t) => t.name === "profile_save");
  return t ? JSON.stringify({ p: t.inputSchema.properties, r: t.inputSchema.required || [] }) : ""; })`
	type schema struct {
		P map[string]struct {
			Default string `json:"default"`
		}
		R []string
	}
	read := func(t *testing.T, got string) (email, city string, required []string) {
		t.Helper()
		var s schema
		if got != "" {
			if err := json.Unmarshal([]byte(got), &s); err != nil {
				t.Fatal(err)
			}
		}
		return s.P["email"].Default, s.P["city"].Default, s.R
	}
	// isolated reads the browser's own list from an isolated world of the
	// tab, where nothing the page's scripts define is seen.
	isolated := func(t *testing.T) string {
		t.Helper()
		tree, err := chromedp.Call(tb.ctx, page.GetFrameTree, cdproto.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		world, err := chromedp.Call(tb.ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: tree.FrameTree.Frame.ID, WorldName: "consumer"})
		if err != nil {
			t.Fatal(err)
		}
		yes := true
		res, err := chromedp.Call(tb.ctx, cdpruntime.Evaluate, cdpruntime.EvaluateParams{
			Expression: props + `(document.modelContext.getTools())`, ContextID: world.ExecutionContextID, ReturnByValue: &yes, AwaitPromise: &yes})
		if err != nil || res.ExceptionDetails != nil {
			t.Fatalf("reading the tools from an isolated world: %v %+v", err, res.ExceptionDetails)
		}
		var s string
		_ = json.Unmarshal(res.Result.Value, &s)
		return s
	}
	tb.waitJS(`(async () => (await document.modelContext.getTools()).some((t) => t.name === "profile_save"))()`)
	if _, _, req := read(t, eval[string](tb, props+`(document.modelContext.getTools())`)); len(req) != 2 {
		t.Fatalf("before the fill both fields should be required, got %v", req)
	}

	// Filled by script: a consumer elsewhere sees it within the interval.
	eval[bool](tb, `(fill("ana@example.com", "Lyon"), true)`)
	var last string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		last = isolated(t)
		if email, city, req := read(t, last); email == "ana@example.com" && city == "Lyon" && len(req) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the browser's own list (read from an isolated world) never had the filled values as defaults; last %s", last)
			break
		}
	}

	// In the page's script context, getTools right after the fill.
	email, city, req := read(t, eval[string](tb, `(async () => { fill("bo@example.com", "Oslo"); return `+props+`(document.modelContext.getTools()); })()`))
	if email != "bo@example.com" || city != "Oslo" || len(req) != 0 {
		t.Errorf("getTools() right after the page filled bo@example.com, Oslo: defaults %q, %q, required %v", email, city, req)
	}
}

// TestWebMCPMirrorLooksOnlyAtDeclaredFields: the mirror's look each
// second compares only the fields a declared form reads, so a page whose
// other inputs change (a filter, a grid of thousands of rows) does not
// have its forms read again for them.
func TestWebMCPMirrorLooksOnlyAtDeclaredFields(t *testing.T) {
	tb := openTestPage(t, "/test/webmcp-prefill-fields.html", prefillLaterPage, chromedp.Flag("enable-experimental-web-platform-features", true))
	tb.waitJS(`(async () => (await document.modelContext.getTools()).some((t) => t.name === "profile_save"))()`)
	eval[bool](tb, `(() => { window.reads = 0; const f = pling._forms; pling._forms = function () { window.reads++; return f.apply(this, arguments); }; return true; })()`)
	for i := 0; i < 3; i++ {
		eval[bool](tb, fmt.Sprintf(`(document.getElementById("filter").value = "risotto %d", true)`, i))
		time.Sleep(1200 * time.Millisecond)
	}
	if n := eval[float64](tb, `window.reads`); n != 0 {
		t.Errorf("the forms were read again %v times while only an undeclared field changed, want 0", n)
	}
	// A declared field's change is still seen by the look.
	eval[bool](tb, `(fill("ana@example.com", "Lyon"), true)`)
	tb.waitJS(`window.reads > 0`)
}

// secretFormsPage has a declarative WebMCP form and a Pling markup form,
// each holding secrets the person typed or the browser filled: a
// password, a card number, a one-time code.
const secretFormsPage = `<!doctype html><html lang="en"><head><title>Sign in</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form toolname="sign_in" tooldescription="Sign in" toolautosubmit onsubmit="event.preventDefault()">
  <label>User <input name="user" value="ana"></label>
  <label>Password <input name="password" type="password" required value="hunter2-secret"></label>
  <label>Code <input name="code" autocomplete="one-time-code" value="918273"></label>
  <button>Sign in</button>
</form>
<form data-pling-action="card.save" data-pling-title="Save the card" onsubmit="event.preventDefault()">
  <label>Name <input name="holder" data-pling-param value="Ana Lima"></label>
  <label>Number <input name="number" data-pling-param autocomplete="billing cc-number" required value="4111111111111111"></label>
  <label>PIN <input name="pin" data-pling-param autocomplete="new-password" value="7351"></label>
  <button>Save</button>
</form></body></html>`

// TestFormSecretsAreNoDefaults: a form's values are its params'
// defaults, except a secret's (a password field, autocomplete
// current-password/new-password, cc-*, one-time-code): its value never
// reaches an agent, through the mirror's getTools() or pling.tools()
// (what pling mcp's describe lists), and a required secret stays
// required. The other fields keep their values as defaults.
func TestFormSecretsAreNoDefaults(t *testing.T) {
	tb := openTestPage(t, "/test/secrets.html", secretFormsPage, chromedp.Flag("enable-experimental-web-platform-features", true))
	tb.waitJS(`(async () => (await document.modelContext.getTools()).length === 2)()`)
	for _, from := range []struct{ name, js string }{
		{"getTools", `(async () => JSON.stringify((await document.modelContext.getTools()).map((t) => [t.name, t.inputSchema])))()`},
		{"pling.tools", `(async () => JSON.stringify((await pling.tools()).map((t) => [t.name, t.parameters])))()`},
	} {
		t.Run(from.name, func(t *testing.T) {
			got := eval[string](tb.on(t), from.js)
			for _, secret := range []string{"hunter2-secret", "918273", "4111111111111111", "7351"} {
				if strings.Contains(got, secret) {
					t.Errorf("the tools carry the secret %q: %s", secret, got)
				}
			}
			for _, kept := range []string{`"default":"ana"`, `"default":"Ana Lima"`} {
				if !strings.Contains(got, kept) {
					t.Errorf("the tools lost the field's default %s: %s", kept, got)
				}
			}
			var tools [][2]json.RawMessage
			if err := json.Unmarshal([]byte(got), &tools); err != nil {
				t.Fatal(err)
			}
			required := map[string][]string{}
			for _, tl := range tools {
				var name string
				var s struct{ Required []string }
				_ = json.Unmarshal(tl[0], &name)
				_ = json.Unmarshal(tl[1], &s)
				required[name] = s.Required
			}
			want := map[string][]string{"sign_in": {"password"}, "card_save": {"number"}}
			if diff := cmp.Diff(want, required); diff != "" {
				t.Errorf("required (-want +got):\n%s", diff)
			}
		})
	}
}
