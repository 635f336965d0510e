// Package cdp is the agent-side transport to a real page in Chromium over
// the DevTools protocol (PLING.md §8): it opens (or attaches to) a browser,
// loads the page, waits for window.pling, and sends each Surface request
// through pling.surface.handle in the page — the same call a page's own
// agent would make.
package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// DefaultChromium is Debian's chromium binary.
const DefaultChromium = "/usr/bin/chromium"

// Options configure Open.
type Options struct {
	// ExecPath is the browser to launch; default $PLING_CHROMIUM, else
	// DefaultChromium. Ignored with Remote.
	ExecPath string
	// Remote attaches to a running browser's debugging endpoint
	// (ws://… or http://host:port) instead of launching one.
	Remote string
	// Timeout bounds each request (default 30s); the page load and
	// module start get three times as much.
	Timeout time.Duration
	// Progress, when set, receives one line per step of Open
	// ("launching chromium", "loading URL", "waiting for pling").
	Progress io.Writer
	// Flags are extra browser flags (name → value).
	Flags map[string]any
}

// Page is a loaded page speaking Pling. It implements agent.Transport and
// io.Closer.
type Page struct {
	opts   Options
	tab    context.Context
	mu     sync.Mutex
	stop   []func()
	closed bool
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 30 * time.Second
}

func (o Options) browser() string {
	if o.ExecPath != "" {
		return o.ExecPath
	}
	if p := os.Getenv("PLING_CHROMIUM"); p != "" {
		return p
	}
	return DefaultChromium
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// Open launches (or attaches to) a browser, loads url and waits until the
// page has window.pling. Errors say what is missing: the browser, the page,
// or Pling on the page.
func Open(ctx context.Context, url string, o Options) (*Page, error) {
	p := &Page{opts: o}
	base, baseCancel := context.WithCancel(context.Background())
	p.stop = append(p.stop, baseCancel)
	var actx context.Context
	if o.Remote != "" {
		o.progress("attaching to the browser at %s", o.Remote)
		var cancel context.CancelFunc
		actx, cancel = remote.NewAllocator(base, o.Remote)
		p.stop = append(p.stop, cancel)
	} else {
		bin := o.browser()
		if st, err := os.Stat(bin); err != nil || st.IsDir() {
			p.Close()
			return nil, fmt.Errorf("no browser at %s (install it: apt-get install chromium; or set PLING_CHROMIUM)", bin)
		}
		o.progress("launching %s (headless)", bin)
		flags := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
			chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.WindowSize(1280, 900),
		)
		for k, v := range o.Flags {
			flags = append(flags, chromedp.Flag(k, v))
		}
		var cancel context.CancelFunc
		actx, cancel = chromedp.NewExecAllocator(base, flags...)
		p.stop = append(p.stop, cancel)
	}
	tab, tcancel := chromedp.NewContext(actx)
	p.stop = append(p.stop, sync.OnceFunc(tcancel))
	p.tab = tab

	limit := 3 * o.timeout()
	timer := time.AfterFunc(limit, baseCancel)
	err := chromedp.Do(tab)
	if !timer.Stop() && err != nil {
		err = fmt.Errorf("the browser did not start in %v: %w", limit, err)
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("starting the browser: %w", err)
	}
	lctx, cancel := context.WithTimeout(tab, limit)
	defer cancel()
	stopOnCaller := context.AfterFunc(ctx, cancel)
	defer stopOnCaller()
	o.progress("loading %s", url)
	if err := chromedp.Do(lctx, chromedp.Navigate(url)); err != nil {
		p.Close()
		return nil, fmt.Errorf("loading %s: %w", url, err)
	}
	o.progress("waiting for pling on the page")
	has, err := chromedp.Run(lctx, chromedp.Evaluate[bool](`new Promise((ok) => {
  const t0 = Date.now();
  (function poll() {
    if (window.pling && window.pling.surface) return ok(true);
    if (Date.now() - t0 > 5000) return ok(false);
    setTimeout(poll, 25);
  })();
})`, chromedp.EvalAwaitPromise))
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	if !has {
		p.Close()
		return nil, fmt.Errorf("%s does not speak Pling: no window.pling after 5s (the page must load pling.js)", url)
	}
	return p, nil
}

// Context is the page's chromedp context, for driving the page beside the
// agent (a test clicking the handoff overlay).
func (p *Page) Context() context.Context { return p.tab }

// RoundTrip implements agent.Transport: the request text goes into the page
// as a JSON string literal, never spliced as code, and the response comes
// back as the text pling.surface.handle resolved to.
func (p *Page) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errors.New("cdp: the page is closed")
	}
	lit, err := json.Marshal(string(request))
	if err != nil {
		return nil, err
	}
	expr := `(async () => {
  if (!window.pling) throw new Error("no window.pling on this page (it navigated away?)");
  return JSON.stringify(await window.pling.surface.handle(` + string(lit) + `));
})()`
	tctx, cancel := context.WithTimeout(p.tab, p.opts.timeout())
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	s, err := chromedp.Run(tctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("cdp: %w", err)
	}
	return []byte(s), nil
}

// Close closes the tab and, when Open launched it, the browser.
func (p *Page) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.stop) - 1; i >= 0; i-- {
		p.stop[i]()
	}
	p.stop, p.closed = nil, true
	return nil
}
