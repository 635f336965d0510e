package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// prefilledFormsPage has a WebMCP declarative form and a Pling markup
// form, both empty when the page is parsed and filled by the page's own
// fetch a while after DOMContentLoaded, as a settings page fills what it
// loads: the values are set on the fields (no event, no mutation). The
// markup form's phone field is checked by the page itself
// (setCustomValidity on input), the declarative form's e-mail by the
// browser (type=email).
const prefilledFormsPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Member</title>
HEAD<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form id="book" toolname="book_class" tooldescription="Book a class for the member. Answers the booking's id." toolautosubmit
  onsubmit="event.preventDefault(); if (event.agentInvoked) event.respondWith(Promise.resolve('booked'))">
  <label>E-mail <input id="email" name="email" type="email" required></label>
  <label>Level <select id="level" name="level" required><option value="">Choose a level</option><option value="beginner">Beginner</option><option value="advanced">Advanced</option></select></label>
  <button>Book</button>
</form>
<form id="profile" data-pling-action="profile.save" data-pling-title="Save the profile" onsubmit="event.preventDefault()">
  <label>Name <input id="name" name="name" required data-pling-param></label>
  <label>Phone <input id="phone" name="phone" required data-pling-param
    oninput="this.setCustomValidity(/^[0-9 ]+$/.test(this.value) ? '' : 'A phone number has only digits and spaces')"></label>
  <button>Save</button>
</form>
<script>
addEventListener("DOMContentLoaded", () => setTimeout(async () => {
  const p = await (await fetch("/profile.json")).json();
  for (const k of ["email", "level", "name", "phone"]) document.getElementById(k).value = p[k];
}, 500));
</script></body></html>`

// TestMCPPrefilledFormsThroughPling runs the pling binary as an MCP
// server over stdio (the official Go SDK's client) on a page whose
// declarative WebMCP form and Pling markup form the page fills from its
// own fetch after DOMContentLoaded: with Chromium's native WebMCP, and
// with @mcp-b/webmcp-polyfill in a browser without it. The tools list
// the forms' values as they are now, as defaults, and no prefilled field
// as required; a call the browser's constraints or the page's own check
// refuses answers INVALID_PARAMS naming the field, and leaves the
// person's values in the form (the next list still has them as
// defaults, not the agent's refused value).
func TestMCPPrefilledFormsThroughPling(t *testing.T) {
	browserTest(t)
	bin := buildPling(t)
	eachWebMCP(t, func(t *testing.T, polyfill []byte, env []string) {
		pp := formsThroughPling(t, bin, polyfill, env, "member.html", prefilledFormsPage,
			map[string]string{"profile.json": `{"email":"ana@example.com","level":"beginner","name":"Ana","phone":"555 0101"}`})
		pp.waitTool(t, "profile_save")

		// The declarative form's tool says its tooldescription once,
		// and no title it did not give.
		for _, tl := range pp.list(t) {
			if tl.Name == "book_class" && (tl.Title != "" || strings.Count(tl.Description, "Book a class for the member") != 1 || strings.Contains(tl.Description, "book_class")) {
				t.Errorf("book_class is listed with the title %q and the description %q", tl.Title, tl.Description)
			}
		}
		want := map[string]map[string]any{
			"book_class":   {"email": "ana@example.com", "level": "beginner"},
			"profile_save": {"name": "Ana", "phone": "555 0101"},
		}
		var last string
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			var ok bool
			ok, last = formDefaults(t, pp, want)
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the tools never listed the values the page filled in as defaults (with no prefilled field required); last:\n%s", last)
			}
		}

		for _, bad := range []struct {
			tool, field, says string
			args              map[string]any
		}{
			{"book_class", "/email", "the page says", map[string]any{"email": "not an address", "level": "advanced"}},
			{"profile_save", "/phone", "A phone number has only digits and spaces", map[string]any{"phone": "call me"}},
		} {
			out, res := pp.call(t, bad.tool, bad.args)
			if !res.IsError || !strings.HasPrefix(out, "INVALID_PARAMS") || !strings.Contains(out, bad.field) || !strings.Contains(out, bad.says) {
				t.Errorf("%s %v answered (error %v) %q; want INVALID_PARAMS naming %s with %q", bad.tool, bad.args, res.IsError, out, bad.field, bad.says)
			}
			if ok, got := formDefaults(t, pp, want); !ok {
				t.Errorf("after the refused %s call the form does not hold the person's values:\n%s", bad.tool, got)
			}
		}
	})
}

// formsThroughPling serves page (its HEAD marker replaced by the
// polyfill's script tag where polyfill is given) under name with files
// beside it, and starts the pling binary as an MCP server on it with env
// (eachWebMCP gives both).
func formsThroughPling(t *testing.T, bin string, polyfill []byte, env []string, name, page string, files map[string]string) *plingProcess {
	t.Helper()
	head := ""
	if polyfill != nil {
		files["polyfill.js"] = string(polyfill)
		head = `<script src="/polyfill.js"></script>`
	}
	files[name] = strings.Replace(page, "HEAD", head, 1)
	return startPlingProcess(t, bin, env, "mcp", serveFiles(t, files)+"/"+name)
}

// clubFormPage is a WebMCP declarative form the person has filled in
// (its values are in the markup) whose submit handler checks the
// agent's values as a page does: it names the e-mail it refuses
// (setCustomValidity, and rejects respondWith), or rejects with a plain
// Error that names no field. The field's input handler clears its
// message, as a page whose check runs at submit does.
const clubFormPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Club</title>
HEAD<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form id="join" toolname="join_club" tooldescription="Join the club." toolautosubmit>
  <label>E-mail <input id="email" name="email" type="email" required value="ana@example.com" oninput="this.setCustomValidity('')"></label>
  <label>Who <input id="who" name="who" value="Ana"></label>
  <button>Join</button>
</form>
<script>
document.getElementById("join").addEventListener("submit", (e) => {
  e.preventDefault();
  if (!e.agentInvoked) return;
  const f = e.target;
  if (f.email.value.endsWith("@taken.example")) {
    f.email.setCustomValidity("That address is taken");
    e.respondWith(Promise.reject(new Error("That address is taken")));
  } else if (f.who.value === "Crash") {
    e.respondWith(Promise.reject(new Error("The club's server did not answer")));
  } else {
    e.respondWith(Promise.resolve("joined"));
  }
});
</script></body></html>`

// TestMCPFormPageRefusedThroughPling runs the pling binary as an MCP
// server over stdio (the official Go SDK's client) on a declarative
// WebMCP form whose page refuses the agent's values in its own submit
// handler, with Chromium's native WebMCP and with the polyfill: a field
// the page names answers INVALID_PARAMS at its path with the page's
// message, a rejection that names none EXECUTION_FAILED with the page's
// message (no "Observe the page"), and either way the form keeps the
// person's values (the next list has them as defaults, not the agent's).
func TestMCPFormPageRefusedThroughPling(t *testing.T) {
	browserTest(t)
	bin := buildPling(t)
	eachWebMCP(t, func(t *testing.T, polyfill []byte, env []string) {
		pp := formsThroughPling(t, bin, polyfill, env, "club.html", clubFormPage, map[string]string{})
		pp.waitTool(t, "join_club")
		person := map[string]map[string]any{"join_club": {"email": "ana@example.com", "who": "Ana"}}
		if ok, got := formDefaults(t, pp, person); !ok {
			t.Fatalf("join_club does not list the person's values as defaults:\n%s", got)
		}
		for _, bad := range []struct {
			args map[string]any
			want []string // the answer's start, then what it says
		}{
			{map[string]any{"email": "bo@taken.example", "who": "Bo"}, []string{"INVALID_PARAMS", "/email", "That address is taken"}},
			{map[string]any{"email": "bo@example.com", "who": "Crash"}, []string{"EXECUTION_FAILED", "The club's server did not answer"}},
		} {
			out, res := pp.call(t, "join_club", bad.args)
			if !res.IsError || !strings.HasPrefix(out, bad.want[0]) || strings.Contains(out, "Observe the page") {
				t.Errorf("%v answered (error %v) %q; want %s", bad.args, res.IsError, out, bad.want[0])
			}
			for _, w := range bad.want[1:] {
				if !strings.Contains(out, w) {
					t.Errorf("%v answered %q; want it to say %q", bad.args, out, w)
				}
			}
			if ok, got := formDefaults(t, pp, person); !ok {
				t.Errorf("after the refused call %v the form does not hold the person's values:\n%s", bad.args, got)
			}
		}
		if out, res := pp.call(t, "join_club", map[string]any{"email": "bo@example.com", "who": "Bo"}); res.IsError || !strings.Contains(out, "joined") {
			t.Errorf("a call the page accepts answered (error %v) %q", res.IsError, out)
		}
	})
}

// formDefaults lists the tools and reports whether each tool in want
// lists its properties' defaults as want says, none of them required;
// it also returns what the tools listed, for the failure.
func formDefaults(t *testing.T, pp *plingProcess, want map[string]map[string]any) (bool, string) {
	t.Helper()
	ok := true
	var got strings.Builder
	for _, tl := range pp.list(t) {
		w, mine := want[tl.Name]
		if !mine {
			continue
		}
		b, _ := json.Marshal(tl.InputSchema)
		got.WriteString(tl.Name + ": " + string(b) + "\n")
		var s struct {
			Properties map[string]struct {
				Default any `json:"default"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		for name, v := range w {
			if s.Properties[name].Default != v {
				ok = false
			}
			for _, r := range s.Required {
				if r == name {
					ok = false
				}
			}
		}
	}
	return ok && got.Len() > 0, got.String()
}
