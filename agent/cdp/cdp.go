// Package cdp is the agent-side transport to a real page in Chromium over
// the DevTools protocol (docs/agent.md): it opens (or attaches to) a browser,
// loads the page, waits for window.pling, and sends each Surface request
// through pling.surface.handle in the page — the same call a page's own
// agent would make. NewAllocator (launch.go) is the one Chromium launcher
// of the repository: this transport, the conformance host, the browser
// tests and the benchmarks all start the browser through it.
package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/internal/chromium"
)

// Options configure Open.
type Options struct {
	// ExecPath is the browser to launch; default $PLING_CHROMIUM, else
	// /usr/bin/chromium (Debian's); a headless launch of that starts
	// Debian's headless shell when it is installed. Ignored with Remote.
	ExecPath string
	// Remote attaches to a running browser's debugging endpoint
	// (ws://… or http://host:port) instead of launching one.
	Remote string
	// Timeout bounds each request while the page does not say that a
	// person is asked (default 30s); the page load and module start get
	// three times as much. When the page says a person is asked (the
	// shim's "pling:waiting" event: an approval, a handoff), the request
	// may take as long as the page waits for the person (at most MaxWait)
	// plus Timeout. When the deadline passes, or the caller's context
	// ends, the request is cancelled in the page (pling.surface.cancel)
	// and its answer to that is returned, so nothing runs in the page
	// after the agent gave up.
	Timeout time.Duration
	// MaxWait caps how long a page may ask the transport to wait for a
	// person (default 1h).
	MaxWait time.Duration
	// Progress, when set, receives one line per step of Open
	// ("launching chromium", "loading URL", "waiting for pling").
	Progress io.Writer
	// Flags are extra browser flags (name → value).
	Flags map[string]any
	// Headed shows the browser window (a person sees the page, its
	// approvals and handoffs). It needs a display: on Linux, DISPLAY or
	// WAYLAND_DISPLAY; without one, Open fails with ErrNoDisplay.
	Headed bool
	// UserDataDir is the browser profile to use and keep (cookies, logins,
	// caches); default a fresh temporary profile, removed at Close.
	UserDataDir string
	// KeepOpen leaves a launched browser running after Close and after
	// this process exits (pling session start); Page.Endpoint is then the
	// address to attach to. Needs no Remote.
	KeepOpen bool
	// AttachTab, with Remote, drives a tab the browser already has — the
	// one whose id is AttachTab, or with "*" the first page tab — instead
	// of opening a new one, and leaves it open at Close.
	AttachTab string
	// Timing, when set, receives the time each phase of Start took
	// ("launch", "navigate", "pling"), for --verbose.
	Timing func(phase string, took time.Duration)
}

// ErrNoDisplay is Open's error for Headed without a display.
var ErrNoDisplay = chromedp.ErrNoDisplay

// Page is a loaded page speaking Pling. It implements agent.Transport and
// io.Closer.
type Page struct {
	opts     Options
	tab      context.Context // the current tab; read with cur()
	first    context.Context // the tab Start opened: other tabs attach through it
	tabs     map[string]context.Context
	endpoint string
	onNav    []func()
	listened map[string]bool // tabs with the waiting listener
	started  bool            // Start succeeded: a KeepOpen browser stays
	mu       sync.Mutex
	stop     []func()
	closed   bool

	gone     chan struct{} // closed when the browser or the tab went away
	goneWhy  string
	waitersM sync.Mutex
	waiters  map[string]chan agent.Waiting // by request id

	contexts map[string]map[string]mainContext // by tab id, frame id (document.go)
	thrown   map[string]*thrown                // by tab id (thrown.go)

	// navSeq counts the main frame's navigations as they start (a
	// script's location.href = … included), before they commit; mainFrame
	// is the main frame's id, learned from its first navigation.
	navSeq     atomic.Uint64
	navPending atomic.Bool // requested, not yet committed
	// frameReads counts the reads of the tab's frame tree (document),
	// one DevTools round trip each.
	frameReads atomic.Uint64
	mainFrame  atomic.Value // cdp.FrameID

	// Downloads (download.go): dlDir is the private directory a
	// launched browser saves them into ("" when attached); dls the ones
	// not taken yet, oldest first; dlKnown the latest ones by guid,
	// taken or not (a taken one still hears its progress, a second
	// listener's copy of an event is known), dlOrder their guids oldest
	// first; dlEnded the ends reported before their download's beginning
	// (the browser's and the tab's listeners can deliver out of order).
	dlDir   string
	dlMu    sync.Mutex
	dls     []*download
	dlKnown map[string]*download
	dlOrder []string
	dlEnded map[string]browser.EventDownloadProgress
	// upDir holds the files given for file inputs (uploads, the
	// directories of those kept), created at the first.
	upDir   string
	uploads []string

	// acting serializes the view's actions (act.go): a person has one
	// mouse and one keyboard, and two clicks whose press and release
	// events interleave are one click to the page.
	acting sync.Mutex
}

// NavigationSeq counts the current tab's main-frame navigations, each
// from the moment it is requested (a script's location.href = … before
// the new page commits) and again when it commits: a caller that reads it
// before and after an invoke knows the invoke started a navigation.
func (p *Page) NavigationSeq() uint64 { return p.navSeq.Load() }

// NavigationPending reports whether a main-frame navigation was requested
// and has not committed yet (a cancelled one stays pending until the
// next commit; callers bound their wait).
func (p *Page) NavigationPending() bool { return p.navPending.Load() }

// waitBinding is the CDP binding through which the page's "pling:waiting"
// events reach the transport.
const waitBinding = "__plingTransportWaiting"

const waitListener = `addEventListener("pling:waiting", function (e) {
  try { ` + waitBinding + `(JSON.stringify(e.detail)); } catch (_) {}
});`

// cancelGrace is how long a request the agent gave up on may take to
// answer after the cancel reached the page.
const cancelGrace = 5 * time.Second

func (o Options) maxWait() time.Duration {
	if o.MaxWait > 0 {
		return o.MaxWait
	}
	return time.Hour
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 30 * time.Second
}

func (o Options) browser() string { return chromium.Path(o.ExecPath) }

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// Open launches (or attaches to) a browser, loads url and waits until the
// page has window.pling. Errors say what is missing: the browser, the page,
// or Pling on the page.
func Open(ctx context.Context, url string, o Options) (*Page, error) {
	p, err := Start(ctx, url, o)
	if err != nil {
		return nil, err
	}
	o.progress("waiting for pling on the page")
	t0 := time.Now()
	lctx, cancel := context.WithTimeout(p.cur(), 3*o.timeout())
	defer cancel()
	stopOnCaller := context.AfterFunc(ctx, cancel)
	defer stopOnCaller()
	has, err := chromedp.Run(lctx, chromedp.Evaluate[bool](`new Promise((ok) => {
  const t0 = Date.now();
  (function poll() {
    if (window.pling && window.pling.surface) return ok(true);
    if (Date.now() - t0 > 5000) return ok(false);
    setTimeout(poll, 25);
  })();
})`, chromedp.EvalAwaitPromise))
	o.timing("pling", t0)
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

func (o Options) timing(phase string, t0 time.Time) {
	if o.Timing != nil {
		o.Timing(phase, time.Since(t0))
	}
}

// Start launches (or attaches to) a browser and loads url (unless url is
// "" or the tab is attached), as Open does, but does not require the page
// to speak Pling: a browsing session may be on any page (see Info).
func Start(ctx context.Context, url string, o Options) (*Page, error) {
	p := &Page{opts: o, gone: make(chan struct{}), waiters: map[string]chan agent.Waiting{},
		tabs: map[string]context.Context{}, listened: map[string]bool{}}
	base, baseCancel := context.WithCancel(context.Background())
	p.stop = append(p.stop, baseCancel)
	var actx context.Context
	t0 := time.Now()
	var topts []chromedp.ContextOption
	if o.Remote != "" {
		o.progress("attaching to the browser at %s", o.Remote)
		var cancel context.CancelFunc
		actx, cancel = remote.NewAllocator(base, o.Remote)
		p.stop = append(p.stop, cancel)
		p.endpoint = o.Remote
		if o.AttachTab != "" {
			id, err := findTab(ctx, actx, o.AttachTab)
			if err != nil {
				p.Close()
				return nil, err
			}
			topts = append(topts, chromedp.WithTargetID(target.ID(id)), chromedp.WithDetachOnCancel())
		}
	} else {
		bin := o.browser()
		if !o.Headed {
			bin = chromium.Headless(bin)
		}
		var flags []chromedp.ExecAllocatorOption
		for k, v := range o.Flags {
			flags = append(flags, chromedp.Flag(k, v))
		}
		if o.Headed {
			flags = append(flags, chromedp.VisibleWindow, chromedp.Flag("start-maximized", false))
		}
		if o.UserDataDir != "" {
			flags = append(flags, chromedp.UserDataDir(o.UserDataDir))
		}
		if o.KeepOpen {
			flags = append(flags, chromedp.KeepOpen, remote.WebSocket)
		}
		var cancel context.CancelFunc
		var err error
		if actx, cancel, err = NewAllocator(base, bin, flags...); err != nil {
			p.Close()
			return nil, err
		}
		mode := "headless"
		if o.Headed {
			mode = "headed"
		}
		o.progress("launching %s (%s)", bin, mode)
		p.stop = append(p.stop, cancel)
		// Downloads go to a directory only this process reads (0700),
		// removed when the page closes (after the browser is stopped); a
		// browser kept open for others keeps its own settings.
		if !o.KeepOpen {
			dir, err := os.MkdirTemp("", "pling-downloads-")
			if err != nil {
				p.Close()
				return nil, err
			}
			p.dlDir = dir
			p.stop = append([]func(){func() { os.RemoveAll(dir) }}, p.stop...)
		}
	}
	tab, tcancel := chromedp.NewContext(actx, topts...)
	p.stop = append(p.stop, sync.OnceFunc(tcancel))
	p.tab, p.first = tab, tab

	limit := 3 * o.timeout()
	timer := time.AfterFunc(limit, baseCancel)
	err := chromedp.Do(tab)
	if !timer.Stop() && err != nil {
		err = fmt.Errorf("the browser did not start in %v: %w", limit, err)
	}
	if err != nil {
		p.Close()
		if errors.Is(err, chromedp.ErrNoDisplay) {
			return nil, fmt.Errorf("%w: --headed needs a display (set DISPLAY, or run under xvfb-run)", ErrNoDisplay)
		}
		return nil, fmt.Errorf("starting the browser: %w", err)
	}
	if o.KeepOpen {
		p.endpoint, _ = chromedp.KeptOpen(tab)
	}
	o.timing("launch", t0)
	if c := chromedp.FromContext(tab); c != nil && c.Target != nil {
		p.tabs[string(c.Target.TargetID)] = tab
	}
	p.watchGone()
	lctx, cancel := context.WithTimeout(tab, limit)
	defer cancel()
	stopOnCaller := context.AfterFunc(ctx, cancel)
	defer stopOnCaller()
	if err := p.listenTab(lctx, tab); err != nil {
		p.Close()
		return nil, fmt.Errorf("starting the browser: %w", err)
	}
	if p.dlDir != "" {
		// Download events come on the browser's connection, not a tab's.
		if err := chromedp.ListenBrowser(tab, p.downloadEvent); err != nil {
			p.Close()
			return nil, fmt.Errorf("starting the browser: %w", err)
		}
	}
	if url == "" || o.AttachTab != "" {
		p.started = true
		return p, nil
	}
	o.progress("loading %s", url)
	t0 = time.Now()
	if err := chromedp.Do(lctx, chromedp.Navigate(url)); err != nil {
		p.Close()
		return nil, fmt.Errorf("loading %s: %w", url, err)
	}
	o.timing("navigate", t0)
	p.started = true
	return p, nil
}

// findTab finds the page tab to attach to: the one with id, or with "*"
// the first page tab.
func findTab(ctx context.Context, actx context.Context, id string) (string, error) {
	probe, cancel := chromedp.NewContext(actx)
	defer cancel()
	var infos []*target.Info
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if infos, err = chromedp.Targets(probe); err != nil {
			return "", fmt.Errorf("listing the browser's tabs: %w", err)
		}
		for _, in := range infos {
			if in.Type == "page" && (id == "*" || string(in.TargetID) == id) {
				return string(in.TargetID), nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("the browser has no tab %s (its window was closed?)", id)
		}
	}
}

// Endpoint is the debugging address of the browser (its Remote, or with
// KeepOpen the address of the browser Start launched).
func (p *Page) Endpoint() string { return p.endpoint }

// TabID is the id of the current tab.
func (p *Page) TabID() string {
	if c := chromedp.FromContext(p.cur()); c != nil && c.Target != nil {
		return string(c.Target.TargetID)
	}
	return ""
}

// cur is the current tab.
func (p *Page) cur() context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tab
}

// Context is the page's chromedp context, for driving the page beside the
// agent (a test clicking the handoff overlay).
func (p *Page) Context() context.Context { return p.cur() }

// RoundTrip implements agent.Transport: the request text goes into the page
// as a JSON string literal, never spliced as code, and the response comes
// back as the text pling.surface.handle resolved to. See Options.Timeout
// for how long it waits, and what happens when it gives up. A request it
// could not send (the browser or the tab is gone) fails with an error that
// wraps agent.ErrNotSent.
func (p *Page) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	return p.roundTrip(ctx, request, nil)
}

func (p *Page) roundTrip(ctx context.Context, request []byte, doc *Document) ([]byte, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("cdp: the page is closed; the request was not sent: %w", agent.ErrNotSent)
	}
	if err := p.goneErr(); err != nil {
		return nil, err
	}
	var env struct {
		ID      string `json:"id"`
		Session string `json:"session"`
	}
	_ = json.Unmarshal(request, &env)
	lit, err := json.Marshal(string(request))
	if err != nil {
		return nil, err
	}
	// A page that just navigated may not have run its scripts yet: wait
	// for window.pling a little (the shim defines it as the document
	// loads), then say the page does not speak Pling. The answer is
	// bounded in the page (boundedJS): a page that answers 50 MB costs
	// this side its length, not its bytes.
	body := `
  for (let i = 0; !(window.pling && window.pling.surface) && i < 120; i++) await new Promise((r) => setTimeout(r, 25));
  if (!window.pling) throw "no window.pling on this page (it navigated away?)";
  return JSON.stringify(await window.pling.surface.handle(` + string(lit) + `));`
	waits := p.watch(env.ID)
	defer p.unwatch(env.ID, waits)
	tab := p.cur()
	unique := ""
	if doc != nil {
		// Right before the request goes out: the tab still shows doc,
		// as the browser says (checkBound); and the request is evaluated
		// in doc's own context, which the browser refuses once doc is
		// gone.
		if err := p.checkBound(ctx, tab, doc); err != nil {
			return nil, err
		}
		unique = doc.Context
	}
	ectx, ecancel := context.WithCancel(tab)
	defer ecancel()
	done := make(chan answer, 1)
	go func() {
		s, err := evalBounded(ectx, body, MaxAnswer, unique)
		done <- answer{s, err}
	}()
	limit := p.opts.timeout()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case a := <-done:
			return a.result(nil)
		case w := <-waits:
			// A person is asked: wait as long as the page does, and then
			// as long again as for any request.
			limit = min(w.Timeout, p.opts.maxWait()) + p.opts.timeout()
			timer.Reset(limit)
			agent.ReportWaiting(ctx, w)
		case <-timer.C:
			return p.giveUp(env.ID, env.Session, done, fmt.Errorf("no answer in %v", limit))
		case <-ctx.Done():
			return p.giveUp(env.ID, env.Session, done, ctx.Err())
		}
	}
}

type answer struct {
	text string
	err  error
}

func (a answer) result(gaveUp error) ([]byte, error) {
	switch {
	case a.err == nil:
		return []byte(a.text), nil
	case gaveUp != nil:
		return nil, fmt.Errorf("cdp: gave up (%v): %w", gaveUp, a.err)
	}
	return nil, fmt.Errorf("cdp: %w", a.err)
}

// giveUp cancels the request in the page and returns its answer to that:
// PERMISSION_DENIED or HANDOFF_CANCELLED (details.cancelled) when it had
// not run, else its outcome, if it comes within cancelGrace. Only an
// answer that does not come leaves the call unconfirmed.
func (p *Page) giveUp(id, session string, done <-chan answer, why error) ([]byte, error) {
	stopped, cerr := p.cancelInPage(id, session)
	grace := time.NewTimer(cancelGrace)
	defer grace.Stop()
	select {
	case a := <-done:
		return a.result(why)
	case <-grace.C:
	}
	switch {
	case cerr != nil:
		return nil, fmt.Errorf("cdp: gave up (%v), and the cancel did not reach the page: %v", why, cerr)
	case stopped:
		return nil, fmt.Errorf("cdp: gave up (%v); the page stopped the call before it ran, but its answer did not come", why)
	}
	return nil, fmt.Errorf("cdp: gave up (%v); the call was past cancelling in the page and its answer did not come", why)
}

// cancelInPage calls pling.surface.cancel(id, session) in the page.
func (p *Page) cancelInPage(id, session string) (bool, error) {
	idLit, _ := json.Marshal(id)
	sessLit, _ := json.Marshal(session)
	ctx, cancel := context.WithTimeout(p.cur(), cancelGrace)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[bool](`(async () => {
  const s = window.pling && window.pling.surface;
  return !!(s && s.cancel && await s.cancel(`+string(idLit)+`, `+string(sessLit)+`));
})()`, chromedp.EvalAwaitPromise))
}

// listenWaiting adds the binding and the listener that carry the page's
// "pling:waiting" events to the request they are about, in tab.
func (p *Page) listenWaiting(ctx, tab context.Context) error {
	tabID := ""
	if c := chromedp.FromContext(tab); c != nil && c.Target != nil {
		tabID = string(c.Target.TargetID)
	}
	err := chromedp.Listen(tab, func(ev any) {
		switch e := ev.(type) {
		case *cdpruntime.EventExecutionContextCreated:
			p.noteContext(tabID, e)
		case *cdpruntime.EventExecutionContextDestroyed:
			p.forgetContext(tabID, e.ExecutionContextUniqueID)
		case *cdpruntime.EventExecutionContextsCleared:
			p.mu.Lock()
			delete(p.contexts, tabID)
			p.mu.Unlock()
			p.navigated(tab)
		case *page.EventFrameStartedNavigating:
			// The main frame's id is its tab's target id.
			if string(e.FrameID) == tabID && !strings.HasPrefix(string(e.NavigationType), "same") {
				p.navigated(tab)
			}
		case *cdpruntime.EventExceptionThrown:
			p.noteThrown(tabID, e.ExceptionDetails)
		case *cdpruntime.EventExceptionRevoked:
			p.revokeThrown(tabID, e.ExceptionID)
		case *cdpruntime.EventBindingCalled:
			if e.Name == waitBinding {
				p.noteWaiting(e.Payload)
			}
		case *page.EventFrameRequestedNavigation:
			if id, ok := p.mainFrame.Load().(cdproto.FrameID); ok && e.FrameID == id && tab == p.cur() {
				p.navPending.Store(true)
				p.navSeq.Add(1)
			}
		case *page.EventFrameNavigated:
			if e.Frame != nil && e.Frame.ParentID == "" {
				p.forgetThrown(tabID)
				if tab == p.cur() {
					p.mainFrame.Store(e.Frame.ID)
					p.navPending.Store(false)
					p.navSeq.Add(1)
				}
				p.navigated(tab)
			}
		case *page.EventNavigatedWithinDocument:
			p.navigated(tab)
		case *browser.EventDownloadWillBegin, *browser.EventDownloadProgress:
			p.downloadEvent(e)
		}
	})
	if err != nil {
		return err
	}
	// The contexts that exist already were reported before the listener
	// was there: have the browser report them again (before the binding
	// is added, which Runtime.disable would drop).
	if _, err := chromedp.Call(ctx, cdpruntime.Disable, cdproto.Empty{}); err != nil {
		return err
	}
	if _, err := chromedp.Call(ctx, cdpruntime.Enable, cdproto.Empty{}); err != nil {
		return err
	}
	if _, err := chromedp.Call(ctx, cdpruntime.AddBinding, cdpruntime.AddBindingParams{Name: waitBinding}); err != nil {
		return err
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: waitListener}); err != nil {
		return err
	}
	return p.enableDownloads(ctx)
}

// noteWaiting passes a notice to the request it names. The page's text is
// untrusted: a notice for no request in flight, or of an unknown kind, is
// dropped, and its time is capped by MaxWait where it is used.
func (p *Page) noteWaiting(payload string) {
	var w struct {
		ID         string `json:"id"`
		Capability string `json:"capability"`
		Kind       string `json:"kind"`
		TimeoutMs  int64  `json:"timeoutMs"`
		Outside    bool   `json:"outside"`
		Approval   string `json:"approval"`
	}
	if json.Unmarshal([]byte(payload), &w) != nil || (w.Kind != "approval" && w.Kind != "handoff") || w.TimeoutMs < 0 {
		return
	}
	if w.Kind != "approval" || !approvalID(w.Approval) {
		w.Approval = ""
	}
	p.waitersM.Lock()
	ch := p.waiters[w.ID]
	p.waitersM.Unlock()
	if ch == nil {
		return
	}
	timeout := time.Duration(min(w.TimeoutMs, p.opts.maxWait().Milliseconds())) * time.Millisecond
	select {
	case ch <- agent.Waiting{RequestID: w.ID, Capability: w.Capability, Kind: w.Kind, Timeout: timeout, Outside: w.Outside, Approval: w.Approval}:
	default: // the request has notices enough to read
	}
}

// approvalID reports whether s has the shape of an authority's approval
// id (1 to 64 URL-safe characters): the page's word goes into a URL.
func approvalID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (p *Page) watch(id string) chan agent.Waiting {
	p.waitersM.Lock()
	defer p.waitersM.Unlock()
	if _, taken := p.waiters[id]; taken || id == "" {
		return nil // a nil channel: no notices for a duplicate id
	}
	ch := make(chan agent.Waiting, 4)
	p.waiters[id] = ch
	return ch
}

func (p *Page) unwatch(id string, ch chan agent.Waiting) {
	if ch == nil {
		return
	}
	p.waitersM.Lock()
	delete(p.waiters, id)
	p.waitersM.Unlock()
}

// watchGone closes Gone when the connection to the browser drops (its
// process died, a remote browser went away) or the tab closes, unless
// Close did it.
func (p *Page) watchGone() {
	c := chromedp.FromContext(p.first)
	if c == nil || c.Browser == nil {
		return
	}
	lost := c.Browser.LostConnection
	detached, err := chromedp.Detached(p.first)
	if err != nil {
		detached = nil
	}
	go func() {
		why := "the connection to it dropped: its process exited or was killed"
		select {
		case <-lost:
		case <-detached:
			why = "its tab was closed"
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.closed {
			return
		}
		p.goneWhy = why
		close(p.gone)
	}()
}

// Gone returns a channel that closes when the browser or the page's tab
// went away without Close: nothing can be sent to the page any more.
func (p *Page) Gone() <-chan struct{} { return p.gone }

// goneErr is the error of a request that cannot be sent because the
// browser is gone.
func (p *Page) goneErr() error {
	select {
	case <-p.gone:
		p.mu.Lock()
		why := p.goneWhy
		p.mu.Unlock()
		return fmt.Errorf("cdp: the browser is gone (%s); the request was not sent: %w", why, agent.ErrNotSent)
	default:
		return nil
	}
}

// Close closes the tab and, when Open launched it, the browser.
func (p *Page) Close() error {
	if p.opts.KeepOpen && !p.started {
		// Start failed: a browser kept open for nobody is ended.
		if pid := p.BrowserPID(); pid > 0 {
			if pr, err := os.FindProcess(pid); err == nil {
				_ = pr.Kill()
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.stop) - 1; i >= 0; i-- {
		p.stop[i]()
	}
	p.stop, p.closed = nil, true
	return nil
}
