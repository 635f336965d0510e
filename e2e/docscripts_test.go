package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/schema"
)

var (
	// nodeScript loads the module in Node (docs/page-api.md §6).
	nodeScript = regexp.MustCompile(`require\("\./js-shim/node\.js"\)`)
	// moduleScript imports the npm package's page entry (docs/page-api.md §7).
	moduleScript = regexp.MustCompile(`(?m)^import .* from "@pling/page";`)
)

// scriptPage is a page script of the docs as a reader would put it on a
// page, and what the page is. A classic script goes after the tag that
// loads pling.js (deferred, every capability exposed, as in
// docs/page-api.md §1) and the stub of js-shim/stub.js (§1.2), so it runs
// before the shim does; the stub itself goes alone before the tag. A
// module that imports @pling/page gets an import map to the package's
// page entry, pling.mjs, served with the pling.js it imports under
// /test/npm/ (pling serve's /pling/ has no pling.mjs), and its assets
// option points at /pling/, where the module and the other assets are
// (the docs' /static/pling/ is where a reader's site serves them).
func scriptPage(t *testing.T, js string) (page, what string) {
	t.Helper()
	b, err := os.ReadFile("../js-shim/stub.js")
	if err != nil {
		t.Fatal(err)
	}
	stub := strings.TrimSpace(string(b))
	tag := `<script src="/pling/pling.js" data-expose="*" defer></script>`
	switch {
	case moduleScript.MatchString(js):
		js = strings.ReplaceAll(js, `"/static/pling/"`, `"/pling/"`)
		return `<script type="importmap">{"imports": {"@pling/page": "/test/npm/pling.mjs"}}</script>
<script type="module">
` + js + `</script>`, "a module importing @pling/page through an import map to /test/npm/pling.mjs, assets from /pling/"
	case strings.TrimSpace(js) == stub:
		return "<script>" + js + "</script>\n" + tag, "the stub, then the pling.js tag"
	default:
		return "<script>" + stub + "</script>\n" + tag + "\n<script>\n" + js + "</script>", "the stub, the deferred pling.js tag, then the script"
	}
}

// TestDocScripts: every ```js block of the README and docs/ runs as
// written. A Node script (it requires ./js-shim/node.js) runs in node
// beside js-shim/ and the built dist/, its top-level await inside an
// async function; it throws nothing, and the response it gets (res) is
// ok without a business error. A page script runs in Chromium on a page
// scriptPage describes, checked as TestDocSnippets checks an ```html
// block: it throws nothing, the page speaks Pling, and an action it
// declares is described and invoked.
func TestDocScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and node: not in -short mode")
	}
	blocks := docFenced(t, "js")
	if len(blocks) == 0 {
		t.Fatal("no ```js blocks found in README.md and docs/")
	}
	d := dist(t)
	pages := http.NewServeMux()
	for _, f := range []string{"pling.mjs", "pling.js"} {
		b, err := os.ReadFile(filepath.Join(d, f))
		if err != nil {
			t.Fatal(err)
		}
		pages.HandleFunc("/test/npm/"+f, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			_, _ = w.Write(b)
		})
	}
	paths := map[string]string{}
	whats := map[string]string{}
	for i, s := range blocks {
		if nodeScript.MatchString(s.html) {
			continue
		}
		p := fmt.Sprintf("/test/scripts/%d.html", i)
		page, what := scriptPage(t, s.html)
		paths[s.name], whats[s.name] = p, what
		body := snippetPage(page)
		pages.HandleFunc(p, staticPage(body))
	}
	var site *browserSite
	if len(paths) > 0 {
		site = startBrowserSite(t, d, pages)
	}
	for _, s := range blocks {
		t.Run(s.name, func(t *testing.T) {
			if s.norun != "" {
				t.Skipf("marked pling:norun: %s", s.norun)
			}
			if nodeScript.MatchString(s.html) {
				runNodeScript(t, d, s.html)
				return
			}
			t.Logf("page: %s", whats[s.name])
			checkSnippet(t, site.open(t, paths[s.name]), s.html)
		})
	}
}

// runNodeScript runs a Node script of the docs in a directory with
// js-shim/ and dist/ (the built module), as the docs' relative paths
// expect, and checks the response it leaves in res.
func runNodeScript(t *testing.T, d, js string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	shim, err := filepath.Abs("../js-shim")
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for link, target := range map[string]string{"js-shim": shim, "dist": abs} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	script := "(async () => {\n" + js + "\nreturn typeof res === \"undefined\" ? null : res;\n})().then(" +
		"(r) => { process.stdout.write(JSON.stringify(r)); process.exit(0); }, " +
		"(e) => { process.stderr.write(String((e && e.stack) || e)); process.exit(1); });\n"
	if err := os.WriteFile(filepath.Join(dir, "snippet.cjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "snippet.cjs")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, stderr.String(), js)
	}
	if string(out) == "null" {
		t.Fatalf("the script leaves no response in res:\n%s", js)
	}
	var r schema.SurfaceResponse
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("res is not a Surface response: %v\n%s", err, out)
	}
	var result schema.SurfaceInvokeResult
	if !r.OK || json.Unmarshal(r.Result, &result) != nil || result.Error != nil {
		t.Fatalf("res is not a successful invoke:\n%s", out)
	}
	t.Logf("res: %s", out)
}
