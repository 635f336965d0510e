package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/schema"
)

// The rig of the browser tests: a demo site and a Chromium, a page's tab
// and what a test does with it (declare, evaluate, describe, invoke).

// waitLimit bounds every wait for the page: a condition that takes longer
// has failed.
const waitLimit = 15 * time.Second

// browserSite is the server and the browser the subtests share.
type browserSite struct {
	url    string // http://127.0.0.1:port, the demo site
	remote string // the browser's DevTools websocket; each page is a tab in it
}

// startBrowserSite serves the demo site with the module from dist and
// starts one Chromium with a debugging port. extra routes (test-only
// pages) are tried before the site.
func startBrowserSite(t *testing.T, dist string, extra *http.ServeMux, flags ...chromedp.ExecAllocatorOption) *browserSite {
	t.Helper()
	return startBrowserSiteWith(t, dist, extra, siteSetup{}, flags...)
}

// siteSetup adapts startBrowserSite: wrap, when set, wraps the site's
// handler (to watch what it serves); flags, when set, gives browser flags
// that need the site's address (http://127.0.0.1:port).
type siteSetup struct {
	wrap  func(http.Handler) http.Handler
	flags func(siteURL string) []chromedp.ExecAllocatorOption
}

func startBrowserSiteWith(t *testing.T, dist string, extra *http.ServeMux, setup siteSetup, flags ...chromedp.ExecAllocatorOption) *browserSite {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := demoSite(t, ctx, dist, demosite.Options{Brotli: 1})
	mux := http.NewServeMux()
	if extra != nil {
		mux.Handle("/test/", extra)
		mux.Handle("/shop/webmcp.html", extra)
		mux.Handle("/gateway/", extra) // the assistant's gateway (assistant_test.go)
	}
	mux.Handle("/", srv)
	var h http.Handler = mux
	if setup.wrap != nil {
		h = setup.wrap(mux)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	if setup.flags != nil {
		flags = append(flags, setup.flags(ts.URL)...)
	}

	// One browser for every page: each cdp.Open attaches to it.
	start := time.Now()
	_, url := launchBrowser(t, context.Background(), flags...)
	t.Logf("chromium started in %v; site %s", time.Since(start).Round(time.Millisecond), ts.URL)
	return &browserSite{url: ts.URL, remote: url}
}

// demoSite is the handler of pling serve for the demo site with the
// module built in dist, which must be whole; ctx bounds its background
// work.
func demoSite(t *testing.T, ctx context.Context, dist string, opt demosite.Options) *demosite.Server {
	t.Helper()
	srv, err := demosite.New(ctx, os.DirFS(dist), demosite.Demo(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if m := srv.Missing(); len(m) > 0 {
		t.Fatalf("%s lacks %v: run make wasm", dist, m)
	}
	return srv
}

// testPage serves a test-only page: HTML, never cached, page() called at
// each request (a page may name a server that starts after the site).
func testPage(page func() string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(page()))
	}
}

// staticPage serves the test-only page html (testPage).
func staticPage(html string) http.HandlerFunc { return testPage(func() string { return html }) }

// openTestPage serves the test-only page html at path beside the demo
// site, starts a browser with flags and opens the page in it.
func openTestPage(t *testing.T, path, html string, flags ...chromedp.ExecAllocatorOption) *tab {
	t.Helper()
	extra := http.NewServeMux()
	extra.HandleFunc(path, staticPage(html))
	return startBrowserSite(t, dist(t), extra, flags...).open(t, path)
}

// devToolsURL takes the browser's websocket address from its output
// ("DevTools listening on ws://…", which chromedp forwards once it read
// it) and drops the rest.
type devToolsURL struct {
	mu   sync.Mutex
	line []byte
	url  string
}

func (d *devToolsURL) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.url != "" {
		return len(p), nil
	}
	d.line = append(d.line, p...)
	for {
		i := bytes.IndexByte(d.line, '\n')
		if i < 0 {
			break
		}
		if rest, ok := strings.CutPrefix(string(d.line[:i]), "DevTools listening on "); ok {
			d.url, d.line = strings.TrimSpace(rest), nil
			break
		}
		d.line = d.line[i+1:]
	}
	return len(p), nil
}

func (d *devToolsURL) get() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.url
}

// tab is one page of the site in its own browser tab, with the agent's
// client, as seen from one test: its helpers fail that test.
type tab struct {
	t *testing.T
	*pageConn
}

type pageConn struct {
	page   *cdp.Page
	agent  *agent.Client
	ctx    context.Context // the tab's chromedp context
	mu     sync.Mutex
	output []string // the page's console, shown when the test fails
}

// on is the same page for the subtest t.
func (tb *tab) on(t *testing.T) *tab { return &tab{t: t, pageConn: tb.pageConn} }

// open loads path in a new tab of the shared browser and waits for Pling.
func (s *browserSite) open(t *testing.T, path string) *tab {
	t.Helper()
	start := time.Now()
	p := openTab(t, t.Context(), s.remote, s.url+path, 20*time.Second)
	tb := &tab{t: t, pageConn: &pageConn{page: p, ctx: p.Context(), agent: agent.New(p, agent.WithIDPrefix("e2e"))}}
	msgs := chromedp.Console(tb.ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.output = append(tb.output, m.String())
			tb.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			tb.mu.Lock()
			if len(tb.output) > 0 {
				t.Logf("console of %s:\n  %s", path, strings.Join(tb.output, "\n  "))
			}
			tb.mu.Unlock()
		}
	})
	t.Logf("opened %s in %v", path, time.Since(start).Round(time.Millisecond))
	return tb
}

// attachTab attaches to the tab of the site's browser that shows path (one
// a consumer opened), as the person at that browser.
func (s *browserSite) attachTab(t *testing.T, path string) *tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := cdp.Start(ctx, "", cdp.Options{Remote: s.remote, AttachTab: "*", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("attaching to the browser: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	tabs, err := p.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range tabs {
		if strings.HasPrefix(in.URL, s.url+path) {
			if _, err := p.SwitchTab(ctx, in.ID); err != nil {
				t.Fatalf("attaching to the tab on %s: %v", path, err)
			}
			return &tab{t: t, pageConn: &pageConn{page: p, ctx: p.Context(), agent: agent.New(p, agent.WithIDPrefix("e2e"))}}
		}
	}
	t.Fatalf("no tab shows %s: %+v", path, tabs)
	return nil
}

// openTab opens url in a new tab of the browser at devTools, within a
// minute, with the transport's request timeout; the tab closes when the
// test ends.
func openTab(t *testing.T, ctx context.Context, devTools, url string, timeout time.Duration) *cdp.Page {
	t.Helper()
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	p, err := cdp.Open(octx, url, cdp.Options{Remote: devTools, Timeout: timeout})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// declare declares an action in the page, pling.action(def) with def a
// JavaScript object, waits for the module (pling.ready) and fails the test
// unless the declaration of id was accepted.
func (tb *tab) declare(id, def string) {
	tb.t.Helper()
	if !eval[bool](tb, `(async () => {
  const h = pling.action(`+def+`);
  await pling.ready;
  return (await h.declared).ok;
})()`) {
		tb.t.Fatalf("pling.action did not declare %s", id)
	}
}

// do runs chromedp actions in the tab, bounded by waitLimit.
func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitLimit)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("chromedp: %v", err)
	}
}

// eval evaluates expr in the page (awaiting a promise) into a T.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitLimit)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS waits until expr is truthy in the page.
func (tb *tab) waitJS(expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitLimit+time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(waitLimit)))
	if err != nil {
		tb.t.Fatalf("waiting for %s: %v", expr, err)
	}
}

func (tb *tab) describe() *schema.SurfaceDescription {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.t.Context(), waitLimit)
	defer cancel()
	d, err := tb.agent.Describe(ctx, nil)
	if err != nil {
		tb.t.Fatalf("describe: %v", err)
	}
	return d
}

// describeUntil describes the page until ok accepts the description: the
// page's markup and availability follow the DOM a moment later.
func (tb *tab) describeUntil(what string, ok func(*schema.SurfaceDescription) bool) *schema.SurfaceDescription {
	tb.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		d := tb.describe()
		if ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("describe never showed %s; last: %v", what, ids(d))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (tb *tab) invoke(capability string, input map[string]any) (*agent.Result, error) {
	ctx, cancel := context.WithTimeout(tb.t.Context(), 30*time.Second)
	defer cancel()
	return tb.agent.Invoke(ctx, capability, input)
}

// mustInvoke invokes and fails the test unless it succeeded.
func (tb *tab) mustInvoke(capability string, input map[string]any) *agent.Result {
	tb.t.Helper()
	r, err := tb.invoke(capability, input)
	if err != nil {
		tb.t.Fatalf("invoke %s: %v", capability, err)
	}
	return r
}

// refundAsync asks for the refund of order for reason on the orders
// page (invokeAsync): the action that needs a person's approval.
func (tb *tab) refundAsync(order, reason string) <-chan invokeOutcome {
	return tb.invokeAsync("refund@order", map[string]any{"record": order, "reason": reason})
}

// invokeAsync starts an invoke that waits for a person (handoff,
// approval); the test acts as the person meanwhile.
func (tb *tab) invokeAsync(capability string, input map[string]any) <-chan invokeOutcome {
	ch := make(chan invokeOutcome, 1)
	go func() {
		start := time.Now()
		r, err := tb.invoke(capability, input)
		ch <- invokeOutcome{r, err, time.Since(start)}
	}()
	return ch
}

type invokeOutcome struct {
	res  *agent.Result
	err  error
	took time.Duration
}

func (tb *tab) outcome(ch <-chan invokeOutcome) invokeOutcome {
	tb.t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(40 * time.Second):
		tb.t.Fatal("the invoke did not return")
	}
	return invokeOutcome{}
}

// succeeded waits for the invoke and fails the test unless it succeeded,
// saying what the invoke was.
func (tb *tab) succeeded(ch <-chan invokeOutcome, what string) invokeOutcome {
	tb.t.Helper()
	o := tb.outcome(ch)
	if o.err != nil {
		tb.t.Fatalf("%s: %v", what, o.err)
	}
	return o
}

// wantCode checks that err is a business failure with code.
func wantCode(t *testing.T, err error, code perr.Code) *agent.BusinessError {
	t.Helper()
	var be *agent.BusinessError
	if !errors.As(err, &be) {
		t.Fatalf("got %v, want the business failure %s", err, code)
	}
	if be.Code != code {
		t.Fatalf("got %s (%s), want %s", be.Code, be.Message, code)
	}
	return be
}

func ids(d *schema.SurfaceDescription) []string {
	var out []string
	for _, c := range d.Capabilities {
		out = append(out, c.ID)
	}
	return out
}

func capability(d *schema.SurfaceDescription, id string) *schema.SurfaceCapability {
	for i := range d.Capabilities {
		if d.Capabilities[i].ID == id {
			return &d.Capabilities[i]
		}
	}
	return nil
}

func mustCapability(t *testing.T, d *schema.SurfaceDescription, id string) *schema.SurfaceCapability {
	t.Helper()
	c := capability(d, id)
	if c == nil {
		t.Fatalf("describe lacks %s; it has %v", id, ids(d))
	}
	return c
}

// num reads a JSON number the client decoded (json.Number) as a float.
func num(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// expectationsMet checks the evidence lists met expectations, state by
// state.
func expectationsMet(t *testing.T, r *agent.Result, states ...string) {
	t.Helper()
	if r.Evidence == nil {
		t.Fatalf("%s: no evidence", r.Capability)
	}
	got := map[string]bool{}
	for _, e := range r.Evidence.Expectations {
		if !e.Met {
			t.Errorf("%s: expectation on %s (%s) not met: %v → %v", r.Capability, e.State, e.Condition, e.Before, e.After)
		}
		got[e.State] = true
	}
	for _, s := range states {
		if !got[s] {
			t.Errorf("%s: evidence has no expectation on %s: %+v", r.Capability, s, r.Evidence.Expectations)
		}
	}
}

const (
	handoffDialog = `dialog.pling-ui[data-pling-ui=handoff]`
	answerYes     = ` [data-pling-ui-answer=yes]`
	answerNo      = ` [data-pling-ui-answer=no]`
)
