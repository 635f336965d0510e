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
// mistake, and on a development origin a page's mistakes are reported on
// the console at page load, before any agent calls.
func TestCheckPages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	pages := http.NewServeMux()
	pages.HandleFunc("/test/dev-mistakes.html", staticPage(devMistakesPage))
	site := startBrowserSite(t, dist(t), pages)
	for _, p := range []string{"/shop/", "/orders/", "/settings/"} {
		t.Run("demo "+p, func(t *testing.T) {
			tb := site.open(t, p)
			if got := eval[[]string](tb, `pling.check()`); len(got) != 0 {
				t.Errorf("pling.check() on %s: %q, want no mistakes", p, got)
			}
		})
	}
	t.Run("the console at page load on a development origin", func(t *testing.T) {
		tb := site.open(t, "/test/dev-mistakes.html")
		deadline := time.Now().Add(waitLimit)
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
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no console report of the page's mistakes; console:\n%s", out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
