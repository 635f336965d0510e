package e2e

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/chromium"
	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// authoritySite is the demo site as pling serve --authority runs it: a
// real authority (SQLite, loopback) that issues for the site's origin and
// sends people to its own consent screen, and the site following it,
// whose screen paths lead to the authority's. TestConsentScreen and
// TestApprovalBackendInBrowser share it.
type authoritySite struct {
	origin string                   // the demo site, http://127.0.0.1:port
	auth   *authoritytest.Authority // its URL and operator key
}

// startAuthoritySite serves the demo site with the built module until the
// test ends; ctx bounds the test to four minutes.
func startAuthoritySite(t *testing.T) (authoritySite, context.Context) {
	t.Helper()
	return startAuthoritySiteWith(t, nil)
}

// startAuthoritySiteWith is startAuthoritySite with mod applied to the
// authority's config (nil: none); mod is given the authority's loopback
// listener, open before the authority is configured.
func startAuthoritySiteWith(t *testing.T, mod func(c *authority.Config, authLn net.Listener)) (authoritySite, context.Context) {
	t.Helper()
	d := dist(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	t.Cleanup(cancel)
	// The site's address first: the authority issues for its origin.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() }) // when the site does not start
	origin := "http://" + ln.Addr().String()
	// The consent screen is the authority's own (VerificationURI ""),
	// on its origin, not the site's.
	cfg := authority.Config{Audiences: map[string][]string{origin: {"*"}}, Interval: time.Second}
	var authLn net.Listener
	if mod != nil {
		if authLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		mod(&cfg, authLn)
	}
	auth := authoritytest.StartOn(t, authLn, cfg, nil)
	ss := httptest.NewUnstartedServer(demoSite(t, ctx, d, demosite.Options{Brotli: 1, Authority: auth.URL}))
	ss.Listener.Close()
	ss.Listener = ln
	ss.Start()
	t.Cleanup(ss.Close)
	return authoritySite{origin: origin, auth: auth}, ctx
}

// browserBin is the Chromium the tests launch. Once the module is built
// (the tests that call it have their dist), a missing browser is a
// failure, not a skip, as for the conformance hosts (make deps installs
// it).
func browserBin(t *testing.T) string {
	t.Helper()
	bin := chromium.Path("")
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		t.Fatalf("no browser at %s: the browser tests need Chromium (apt-get install chromium, or set PLING_CHROMIUM)", bin)
	}
	return bin
}

// launchBrowser starts one Chromium, bound to ctx, with a debugging port
// (remote.WebSocket) and flags; it returns the browser's chromedp context
// (a person's tab) and its DevTools websocket, which each cdp.Open
// attaches to, so an agent's pages are tabs of the same browser. chromedp
// gives it a temporary profile and removes it when the browser stops,
// when the test ends at the latest.
func launchBrowser(t *testing.T, ctx context.Context, flags ...chromedp.ExecAllocatorOption) (context.Context, string) {
	t.Helper()
	bin := browserBin(t)
	ws := &devToolsURL{}
	actx, acancel, err := cdp.NewAllocator(ctx, bin, append([]chromedp.ExecAllocatorOption{remote.WebSocket, chromedp.CombinedOutput(ws)}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() { bcancel(); acancel() })
	timer := time.AfterFunc(time.Minute, acancel) // the first Run binds the browser to bctx: no deadline on it
	err = chromedp.Do(bctx)
	timer.Stop()
	if err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	url := ws.get()
	if url == "" {
		t.Fatal("the browser printed no DevTools address")
	}
	return bctx, url
}
