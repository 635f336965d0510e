package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// devMistakesPage declares with one mistake of each kind the console
// report covers, on the test server's 127.0.0.1 (a development origin).
const devMistakesPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dev</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<script>
  pling.action({ id: "board.size", params: { n: { type: "text" } }, run: () => 1 });
  pling.action({ id: "board.add", expect: { state: "board.total", change: "increase" }, run: () => 1 });
</script></body></html>`

// TestCheckPages: every page of the demo site passes pling.check() with no
// mistake; on a development origin (the test server's 127.0.0.1) a visit
// that makes no call fetches no module (TestDevCheckIdle).
func TestCheckPages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	site := startBrowserSite(t, dist(t), nil)
	for _, p := range []string{"/shop/", "/orders/", "/settings/"} {
		t.Run("demo "+p, func(t *testing.T) {
			tb := site.open(t, p)
			if got := eval[[]string](tb, `pling.check()`); len(got) != 0 {
				t.Errorf("pling.check() on %s: %q, want no mistakes", p, got)
			}
		})
	}
}

// TestDevCheckIdle: on a development origin the page's mistakes reach the
// console without the module being started at load: a visit that makes no
// call has fetched no module well after its load event, and the report
// comes once the page is idle (10 s after load), with one fetch of the
// module.
func TestDevCheckIdle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	pages := http.NewServeMux()
	pages.HandleFunc("/test/dev-mistakes.html", staticPage(devMistakesPage))
	var log served
	site := startBrowserSiteWith(t, dist(t), pages, siteSetup{wrap: log.wrap})
	modules := func() (n int) {
		paths, _ := log.snapshot()
		for _, p := range paths {
			if strings.HasSuffix(p, "/pling.wasm") || strings.HasSuffix(p, "/wasm_exec.js") {
				n++
			}
		}
		return n
	}
	tb := site.open(t, "/test/dev-mistakes.html")
	// Three seconds after load (well inside the idle delay): nothing
	// started the module, and nothing of it was fetched.
	started := eval[bool](tb, `new Promise((ok) => {
  const after = () => setTimeout(() => ok(pling._pending === null), 3000);
  if (document.readyState === "complete") after(); else addEventListener("load", after);
})`)
	if started || modules() != 0 {
		paths, _ := log.snapshot()
		t.Errorf("a development visit without a call started the module (%v) or fetched it: %v", started, paths)
	}
	deadline := time.Now().Add(4 * waitLimit)
	for {
		tb.mu.Lock()
		out := strings.Join(tb.output, "\n")
		tb.mu.Unlock()
		if strings.Contains(out, "pling: mistakes:") {
			for _, w := range []string{`"board.size"`, `expect.state names the state "board.total"`} {
				if !strings.Contains(out, w) {
					t.Errorf("the console report lacks %q:\n%s", w, out)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no console report of the page's mistakes once idle; console:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := modules(); n != 2 {
		paths, _ := log.snapshot()
		t.Errorf("the idle check fetched the module's files %d times, want wasm_exec.js and pling.wasm once: %v", n, paths)
	}
}
