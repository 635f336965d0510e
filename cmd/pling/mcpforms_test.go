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
		files := map[string]string{"profile.json": `{"email":"ana@example.com","level":"beginner","name":"Ana","phone":"555 0101"}`}
		head := ""
		if polyfill != nil {
			files["polyfill.js"] = string(polyfill)
			head = `<script src="/polyfill.js"></script>`
		}
		files["member.html"] = strings.Replace(prefilledFormsPage, "HEAD", head, 1)
		base := serveFiles(t, files)
		pp := startPlingProcess(t, bin, env, "mcp", base+"/member.html")
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
