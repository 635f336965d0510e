package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
)

// pling serve bounds every phase of a connection and the header size.
func TestServeHTTPServerBounds(t *testing.T) {
	hs := newHTTPServer(http.NotFoundHandler())
	type bounds struct {
		ReadHeader, Read, Write, Idle time.Duration
		MaxHeaderBytes                int
	}
	got := bounds{hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout, hs.MaxHeaderBytes}
	want := bounds{10 * time.Second, 30 * time.Second, 2 * time.Minute, time.Minute, 64 << 10}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("http.Server bounds (-want +got):\n%s", diff)
	}
}

// startServe runs pling serve on a free port with the module in dist and
// returns its base URL (with a trailing slash).
func startServe(t *testing.T, dist string) string {
	t.Helper()
	return startCmd(t, runServe, "--addr", "127.0.0.1:0", "--dist", dist, "--brotli", "1").servedURL(t)
}

// cspWatch records the page's Content-Security-Policy violations.
const cspWatch = `window.__csp = []; document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI + " " + e.sourceFile + ":" + e.lineNumber));`

// A page on another origin loads the shim and the module from pling serve
// (CORS and CORP on /pling/), and the demo pages work under pling serve's
// Content-Security-Policy without one violation.
func TestServeCrossOriginAndCSP(t *testing.T) {
	dist := os.Getenv("PLING_DIST")
	if dist == "" {
		t.Skip("PLING_DIST is not set: run make wasm, then PLING_DIST=$PWD/dist go test")
	}
	if _, err := os.Stat(filepath.Join(dist, "pling.wasm")); err != nil {
		t.Fatalf("PLING_DIST=%s has no pling.wasm: %v", dist, err)
	}
	base := startServe(t, dist)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Elsewhere</title>
<script src="`+base+`pling/pling.js" data-expose="*"></script>
<script>pling.action({ id: "hello", title: "Say hello", run: () => "hi" });</script>`)
	}))
	t.Cleanup(other.Close)
	if strings.HasPrefix(other.URL, base) {
		t.Fatal("the two servers share an origin")
	}

	ctx := t.Context()
	p, err := cdp.Open(ctx, other.URL+"/", cdp.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	client := agent.New(p)
	d, err := client.Describe(ctx, nil)
	if err != nil {
		t.Fatalf("describe on the other origin: %v", err)
	}
	if len(d.Capabilities) != 1 || d.Capabilities[0].ID != "hello" {
		t.Errorf("capabilities %+v", d.Capabilities)
	}
	res, err := client.Invoke(ctx, "hello", nil)
	if err != nil || string(res.Value) != `"hi"` {
		t.Errorf("invoke hello: %+v, %v", res, err)
	}

	// The same tab, on the demo pages of pling serve, with a listener
	// for CSP violations installed before any page script runs.
	if _, err := chromedp.Call(p.Context(), page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspWatch}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", "shop/", "orders/", "settings/"} {
		t.Run("page /"+path, func(t *testing.T) {
			if err := chromedp.Do(p.Context(), chromedp.Navigate(base+path)); err != nil {
				t.Fatal(err)
			}
			if path != "" { // the index page has no pling
				hasPling, err := chromedp.Run(p.Context(), chromedp.Evaluate[bool](`new Promise((ok) => { const t0 = Date.now(); (function poll() {
  if (window.pling || Date.now() - t0 > 5000) return ok(!!window.pling); setTimeout(poll, 25); })(); })`, chromedp.EvalAwaitPromise))
				if err != nil || !hasPling {
					t.Fatalf("no window.pling: %v", err)
				}
				d, err := client.Describe(ctx, nil)
				if err != nil {
					t.Fatalf("describe: %v", err)
				}
				if len(d.Capabilities) == 0 {
					t.Errorf("no capabilities")
				}
			}
			violations, err := chromedp.Run(p.Context(), chromedp.Evaluate[[]string](`window.__csp`))
			if err != nil {
				t.Fatal(err)
			}
			if len(violations) > 0 {
				t.Errorf("CSP violations on /%s:\n%s", path, strings.Join(violations, "\n"))
			}
		})
	}
}
