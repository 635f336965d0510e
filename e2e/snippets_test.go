package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pling-go/pling/schema"
)

// A snippet is one ```html block of the README or docs/, as a reader
// would paste it into a page.
type snippet struct {
	name  string // FILE:LINE
	html  string
	norun string // the reason given in <!-- pling:norun: REASON -->, or ""
}

var (
	norunMark  = regexp.MustCompile(`<!--\s*pling:norun:?\s*(.*?)\s*-->\s*$`)
	declaresOn = regexp.MustCompile(`pling\.action\(|data-pling-action=`)
)

// docSnippets reads every ```html block of README.md and docs/*.md. A
// block is marked not run by an HTML comment <!-- pling:norun: REASON -->
// on the line before it; a mark without a reason is refused.
func docSnippets(t *testing.T) []snippet { return docFenced(t, "html") }

// docFenced reads the fenced blocks of README.md and docs/*.md whose
// language is one of langs, with their marks.
func docFenced(t *testing.T, langs ...string) []snippet {
	t.Helper()
	alts := make([]string, len(langs))
	for i, l := range langs {
		alts[i] = regexp.QuoteMeta(l)
	}
	block := regexp.MustCompile("(?ms)^```(?:" + strings.Join(alts, "|") + ")\n(.*?)^```")
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../README.md"}, files...)
	var out []snippet
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, m := range block.FindAllStringSubmatchIndex(text, -1) {
			line := strings.Count(text[:m[0]], "\n") + 1
			s := snippet{name: fmt.Sprintf("%s:%d", strings.TrimPrefix(f, "../"), line), html: text[m[2]:m[3]]}
			before := strings.TrimRight(text[:m[0]], "\n")
			if i := strings.LastIndexByte(before, '\n'); i >= 0 {
				before = before[i+1:]
			}
			if nm := norunMark.FindStringSubmatch(before); nm != nil {
				if nm[1] == "" {
					t.Errorf("%s: <!-- pling:norun --> needs a reason: <!-- pling:norun: WHY -->", s.name)
				}
				s.norun = nm[1]
			}
			out = append(out, s)
		}
	}
	return out
}

// snippetPage is a snippet served as a page: the block verbatim in the
// body, after one script of the harness's that records uncaught errors
// (a snippet that throws, such as "pling is not defined", fails).
func snippetPage(html string) string {
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>snippet</title>
<script>window.__snippetErrors = []; addEventListener("error", (e) => __snippetErrors.push(String(e.message)));
addEventListener("unhandledrejection", (e) => __snippetErrors.push("unhandled rejection: " + String(e.reason)));</script>
</head><body>
` + html + `
</body></html>`
}

// TestDocSnippets: every ```html block of the README and docs/ works as
// written, pasted into a page beside the shim and the module (served by
// pling serve's handler at /pling/): it throws nothing, its page speaks
// Pling, and a block that declares an action gets it described and
// invoked with valid input.
func TestDocSnippets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	snips := docSnippets(t)
	if len(snips) == 0 {
		t.Fatal("no ```html blocks found in README.md and docs/")
	}
	d := dist(t)
	pages := http.NewServeMux()
	paths := map[string]string{}
	for i, s := range snips {
		p := fmt.Sprintf("/test/snippets/%d.html", i)
		paths[s.name] = p
		body := snippetPage(s.html)
		pages.HandleFunc(p, staticPage(body))
	}
	site := startBrowserSite(t, d, pages)
	for _, s := range snips {
		t.Run(s.name, func(t *testing.T) {
			if s.norun != "" {
				t.Skipf("marked pling:norun: %s", s.norun)
			}
			checkSnippet(t, site.open(t, paths[s.name]), s.html)
		})
	}
}

// checkSnippet checks a page made of a snippet: it threw nothing, it
// speaks Pling, and an action it declares is described and invoked with
// valid input.
func checkSnippet(t *testing.T, tb *tab, src string) {
	t.Helper()
	errs := eval[[]string](tb, `window.__snippetErrors`)
	if len(errs) > 0 {
		t.Fatalf("the snippet threw: %s\n%s", strings.Join(errs, "; "), src)
	}
	if !declaresOn.MatchString(src) {
		tb.describe()
		return
	}
	desc := tb.describeUntil("an action of the snippet", func(d *schema.SurfaceDescription) bool { return len(d.Capabilities) > 0 })
	c := desc.Capabilities[0]
	input := validInput(c.InputSchema)
	r := tb.mustInvoke(c.ID, input)
	t.Logf("invoke %s %v → %s", c.ID, input, r.Value)
}

// validInput is the smallest input the schema accepts: every required
// param, with its default, its first enum value, or a value of its type
// within its bounds.
func validInput(s schema.JSONSchema) map[string]any {
	in := map[string]any{}
	for _, name := range s.Required {
		in[name] = validValue(s.Properties[name])
	}
	return in
}

func validValue(p *schema.PropertySchema) any {
	switch {
	case p == nil:
		return "x"
	case p.Default != nil:
		return p.Default
	case len(p.Enum) > 0:
		return p.Enum[0]
	}
	switch p.Type {
	case "integer", "number":
		if p.Minimum != nil {
			return *p.Minimum
		}
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	n := 1
	if p.MinLength != nil && *p.MinLength > n {
		n = *p.MinLength
	}
	return strings.Repeat("a", n)
}

// TestDocStub: every copy of the stub in the README and docs/ is
// js-shim/stub.js byte for byte, so the docs cannot drift from the file
// the shim's tests (js-shim/test/stub.test.js) run.
func TestDocStub(t *testing.T) {
	b, err := os.ReadFile("../js-shim/stub.js")
	if err != nil {
		t.Fatal(err)
	}
	stub := strings.TrimSpace(string(b))
	files, _ := filepath.Glob("../docs/*.md")
	found := 0
	for _, f := range append([]string{"../README.md"}, files...) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if !strings.Contains(line, "window.pling=window.pling||") {
				continue
			}
			found++
			if strings.TrimSpace(line) != stub {
				t.Errorf("%s:%d: the stub differs from js-shim/stub.js; paste the file's line", strings.TrimPrefix(f, "../"), i+1)
			}
		}
	}
	if found == 0 {
		t.Error("no copy of the stub in the README or docs/")
	}
}
