package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// clubPage is a WebMCP declarative form that the person has filled in
// (its values are in the markup) and whose submit handler checks what
// the agent sent, as a page does: it names the field it refuses with
// setCustomValidity (then rejects respondWith, at once or after a
// while, or rejects nothing and reports the field), rejects with a
// plain Error that names no field, or rejects with pling.fail naming
// the field. Each field's own input handler clears its message, as a
// page whose check runs at submit does.
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
  } else if (email.endsWith("@blocked.example")) {
    f.email.setCustomValidity("That address is on the blocklist");
    f.email.reportValidity();
  } else if (who === "Crash") {
    e.respondWith(Promise.reject(new Error("The club's server did not answer")));
  } else if (who === "Taken") {
    e.respondWith(Promise.reject(pling.fail("INVALID_PARAMS", "That name is taken", { path: "/who" })));
  } else {
    e.respondWith(Promise.resolve("joined"));
  }
});
</script></body></html>`

// TestWebMCPDeclarativeFormPageRefused: a declarative form whose page
// refuses the agent's values in its own submit handler answers
// INVALID_PARAMS naming the field the page named (setCustomValidity, at
// once or after an awaited check, with or without respondWith; a
// pling.fail path), with the page's message, and gives the person's
// values back; a rejection that names no field is EXECUTION_FAILED with
// the page's message, never "Observe the page", and also leaves the
// person's values. A call the page accepts leaves the agent's values, as
// a person's own submit does.
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
		{"reported without respondWith", `{ email: "bo@blocked.example", who: "Bo" }`, []string{"INVALID_PARAMS:", `"/email"`, "That address is on the blocklist"}},
		{"pling.fail with a path", `{ email: "bo@example.com", who: "Taken" }`, []string{"INVALID_PARAMS:", `"/who"`, "That name is taken"}},
		{"no field named", `{ email: "bo@example.com", who: "Crash" }`, []string{"EXECUTION_FAILED:", "The club's server did not answer"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := tb.on(t)
			out := exec(c.args)
			if !strings.HasPrefix(out, c.want[0]) || strings.Contains(out, "Observe the page") {
				t.Errorf("answered %q; want %s without \"Observe the page\"", out, c.want[0])
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
