package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent"
	plingcdp "github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/demosite"
)

// baPage is the bench page: one write action (which counts its runs on
// the site) and one read action; {{AUTHORITY}} is the attribute that
// makes the page follow an authority, or nothing. Rate limits and loop
// detection are off so that the loop measures the invoke.
const baPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authority bench</title><link rel="icon" href="data:,">
<script src="/pling/pling.js" data-expose="*" data-webmcp="off"{{AUTHORITY}}></script>
<script>
pling.configure({ rateLimit: { describe: { burst: 0 }, invoke: { burst: 0 } }, loop: { repeats: 0 } });
pling.action({ id: "order.place", title: "Place the order", risk: "write",
  run: async () => { await fetch("/bench/authority/executed", { method: "POST" }); return "placed"; } });
pling.action({ id: "order.view", title: "View the order", risk: "read", run: () => "seen" });
</script></head><body><h1>Authority bench</h1></body></html>`

func baRatio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// benchAuthorityBrowser measures the median invoke of the same write
// action on a page without authority (its own IndexedDB guard) and on one
// configured with an authority (one instance on SQLite) under a delegated
// session, whose write invokes consume their ids there (§9.3 consume and
// complete), plus a read action on the latter.
func benchAuthorityBrowser(ctx context.Context, dist, chromium, tmp string, n int) (*baBrowser, error) {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	srv, err := demosite.New(sctx, os.DirFS(dist), demosite.Demo(), demosite.Options{Brotli: 1})
	if err != nil {
		return nil, err
	}
	if m := srv.Missing(); len(m) > 0 {
		return nil, fmt.Errorf("%s lacks %v: run make wasm", dist, m)
	}
	var authorityURL atomic.Value
	authorityURL.Store("")
	var executed atomic.Int64
	mux := http.NewServeMux()
	page := func(attr func() string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.Write([]byte(strings.ReplaceAll(baPage, "{{AUTHORITY}}", attr())))
		}
	}
	mux.HandleFunc("/bench/authority/local.html", page(func() string { return "" }))
	mux.HandleFunc("/bench/authority/shared.html", page(func() string {
		return ` data-authority="` + authorityURL.Load().(string) + `"`
	}))
	mux.HandleFunc("/bench/authority/executed", func(w http.ResponseWriter, r *http.Request) {
		executed.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.Handle("/", srv)
	site, stopSite, err := serveLoopback(mux)
	if err != nil {
		return nil, err
	}
	defer stopSite()

	urls, stopAuth, err := benchInstances(ctx, "sqlite:"+filepath.Join(tmp, "browser.db"), 1, map[string][]string{site: {"order.*"}})
	if err != nil {
		return nil, err
	}
	defer stopAuth()
	authorityURL.Store(urls[0])
	cl := &http.Client{Timeout: 30 * time.Second}
	tok, sid, err := benchGrant(cl, urls, site, []string{"order.*"})
	if err != nil {
		return nil, err
	}

	res := &baBrowser{Invokes: n, Store: "SQLite, one instance on loopback (cross-origin to the page)"}
	var lastWrite string // the id of the last write invoke on the authority page
	measure := func(path, session string, actions ...string) ([][]float64, string, error) {
		p, err := plingcdp.Open(ctx, site+path, plingcdp.Options{ExecPath: chromium})
		if err != nil {
			return nil, "", err
		}
		defer p.Close()
		var product string
		if v, err := chromedp.CallBrowser(p.Context(), browser.GetVersion, cdp.Empty{}); err == nil {
			product = v.Product
		}
		var opts []agent.Option
		if session != "" {
			opts = append(opts, agent.WithSession(session))
		}
		a := agent.New(p, append(opts, agent.WithIDPrefix("bench"))...)
		c, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		if _, err := a.Describe(c, nil); err != nil {
			return nil, "", err
		}
		out := make([][]float64, len(actions))
		for i, act := range actions {
			for k := 0; k < n+10; k++ {
				t0 := time.Now()
				r, err := a.Invoke(c, act, map[string]any{})
				if err != nil {
					return nil, "", fmt.Errorf("%s on %s: %w", act, path, err)
				}
				if session != "" && act == "order.place" {
					lastWrite = r.RequestID
				}
				if k >= 10 { // the first ten warm up
					out[i] = append(out[i], float64(time.Since(t0).Microseconds())/1000)
				}
			}
		}
		return out, product, nil
	}
	local, product, err := measure("/bench/authority/local.html", "", "order.place")
	if err != nil {
		return nil, err
	}
	shared, _, err := measure("/bench/authority/shared.html", tok, "order.view", "order.place")
	if err != nil {
		return nil, err
	}
	if got, want := executed.Load(), int64(2*(n+10)); got != want {
		return nil, fmt.Errorf("the write action ran %d times, want %d", got, want)
	}
	// The authority page's writes went through the shared guard: the
	// authority holds the last one's id.
	if st, b, err := baCall(cl, urls[0], "POST", "/v1/sessions/"+sid+"/requests/"+lastWrite, tok, nil, nil); err != nil || st != http.StatusConflict {
		return nil, fmt.Errorf("the authority's record of %s: %d %v %v, want 409 (the shared check did not run)", lastWrite, st, b, err)
	}
	res.Browser = product
	res.LocalWriteMs, res.AuthorityReadMs, res.AuthorityWriteMs = median(local[0]), median(shared[0]), median(shared[1])
	res.WriteRatio, res.CheckRatio = baRatio(res.AuthorityWriteMs, res.LocalWriteMs), baRatio(res.AuthorityWriteMs, res.AuthorityReadMs)
	return res, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
