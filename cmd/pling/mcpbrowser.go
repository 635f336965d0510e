package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
)

// lazyPage is the browsing session of pling mcp while the browser still
// starts: the MCP handshake does not wait for it, and every use waits for
// it (start-up runs the two side by side). It implements agent.Transport
// and plingmcp.Browser and plingmcp.Viewer (a page's own WebMCP tools included: the bridge
// reaches them only through the Browser it was given).
type lazyPage struct {
	ready chan struct{}
	p     *cdp.Page
	err   error

	mu    sync.Mutex
	onNav []func()
}

// startLazy starts the browser on its own goroutine: open is cdp.Start or
// the attach to a session's tab.
func startLazy(open func() (*cdp.Page, error)) *lazyPage {
	l := &lazyPage{ready: make(chan struct{})}
	go func() {
		p, err := open()
		l.mu.Lock()
		l.p, l.err = p, err
		fs := l.onNav
		l.onNav = nil
		l.mu.Unlock()
		if p != nil {
			for _, f := range fs {
				p.OnNavigate(f)
			}
		}
		close(l.ready)
	}()
	return l
}

func (l *lazyPage) wait(ctx context.Context) (*cdp.Page, error) {
	select {
	case <-l.ready:
		return l.p, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// onPage waits for the browser and calls f on its page; while it does
// not start, f is not called and the error is the start's (or ctx's).
func onPage[T any](ctx context.Context, l *lazyPage, f func(*cdp.Page) (T, error)) (T, error) {
	p, err := l.wait(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return f(p)
}

// sendOnPage is onPage for a request: one the browser never got to is
// not sent (agent.ErrNotSent), so a caller may send it again.
func sendOnPage(ctx context.Context, l *lazyPage, f func(*cdp.Page) ([]byte, error)) ([]byte, error) {
	p, err := l.wait(ctx)
	if err != nil {
		return nil, fmt.Errorf("the browser did not start: %v: %w", err, agent.ErrNotSent)
	}
	return f(p)
}

func (l *lazyPage) RoundTrip(ctx context.Context, req []byte) ([]byte, error) {
	return sendOnPage(ctx, l, func(p *cdp.Page) ([]byte, error) { return p.RoundTrip(ctx, req) })
}

func (l *lazyPage) Document(ctx context.Context) (plingmcp.Document, error) {
	return onPage(ctx, l, func(p *cdp.Page) (plingmcp.Document, error) { return p.Document(ctx) })
}

func (l *lazyPage) RoundTripTo(ctx context.Context, doc plingmcp.Document, req []byte) ([]byte, error) {
	return sendOnPage(ctx, l, func(p *cdp.Page) ([]byte, error) { return p.RoundTripTo(ctx, doc, req) })
}

func (l *lazyPage) Info(ctx context.Context) (plingmcp.PageInfo, error) {
	return onPage(ctx, l, func(p *cdp.Page) (plingmcp.PageInfo, error) { return p.Info(ctx) })
}

func (l *lazyPage) Navigate(ctx context.Context, url string) (plingmcp.PageInfo, error) {
	return onPage(ctx, l, func(p *cdp.Page) (plingmcp.PageInfo, error) { return p.Navigate(ctx, url) })
}

func (l *lazyPage) Back(ctx context.Context) (plingmcp.PageInfo, error) {
	return onPage(ctx, l, func(p *cdp.Page) (plingmcp.PageInfo, error) { return p.Back(ctx) })
}

func (l *lazyPage) Tabs(ctx context.Context) ([]plingmcp.Tab, error) {
	return onPage(ctx, l, func(p *cdp.Page) ([]plingmcp.Tab, error) { return p.Tabs(ctx) })
}

func (l *lazyPage) SwitchTab(ctx context.Context, id string) (plingmcp.PageInfo, error) {
	return onPage(ctx, l, func(p *cdp.Page) (plingmcp.PageInfo, error) { return p.SwitchTab(ctx, id) })
}

func (l *lazyPage) Outline(ctx context.Context, max int) (string, error) {
	return onPage(ctx, l, func(p *cdp.Page) (string, error) { return p.Outline(ctx, max) })
}

// ChangeMark is the page's (cdp.Page.ChangeMark): the bridge's watch
// describes only when it moved.
func (l *lazyPage) ChangeMark(ctx context.Context) (string, error) {
	return onPage(ctx, l, func(p *cdp.Page) (string, error) { return p.ChangeMark(ctx) })
}

func (l *lazyPage) WebMCPTools(ctx context.Context, doc plingmcp.Document) ([]cdp.WebMCPTool, error) {
	return onPage(ctx, l, func(p *cdp.Page) ([]cdp.WebMCPTool, error) { return p.WebMCPTools(ctx, doc) })
}

func (l *lazyPage) ExecuteWebMCP(ctx context.Context, doc plingmcp.Document, name string, args json.RawMessage) (string, error) {
	return onPage(ctx, l, func(p *cdp.Page) (string, error) { return p.ExecuteWebMCP(ctx, doc, name, args) })
}

func (l *lazyPage) View(ctx context.Context, doc plingmcp.Document) ([]cdp.ViewNode, error) {
	return onPage(ctx, l, func(p *cdp.Page) ([]cdp.ViewNode, error) { return p.View(ctx, doc) })
}

func (l *lazyPage) Act(ctx context.Context, doc plingmcp.Document, a cdp.Act) (string, error) {
	return onPage(ctx, l, func(p *cdp.Page) (string, error) { return p.Act(ctx, doc, a) })
}

func (l *lazyPage) WaitText(ctx context.Context, doc plingmcp.Document, text string, gone bool, timeout time.Duration) (bool, error) {
	return onPage(ctx, l, func(p *cdp.Page) (bool, error) { return p.WaitText(ctx, doc, text, gone, timeout) })
}

// started is the page once the browser has started, else nil.
func (l *lazyPage) started() *cdp.Page {
	select {
	case <-l.ready:
		return l.p
	default:
		return nil
	}
}

// Thrown is what the page threw (cdp.Page.Thrown; nothing before the
// browser started), for browser.page.
func (l *lazyPage) Thrown() ([]string, int) {
	if p := l.started(); p != nil {
		return p.Thrown()
	}
	return nil, 0
}

// TakeDownloads is the page's (none before the browser started).
func (l *lazyPage) TakeDownloads(ctx context.Context, wait time.Duration, max int64) []cdp.Download {
	if p := l.started(); p != nil {
		return p.TakeDownloads(ctx, wait, max)
	}
	return nil
}

// NavigationSeq is the page's (0 before the browser started).
func (l *lazyPage) NavigationSeq() uint64 {
	if p := l.started(); p != nil {
		return p.NavigationSeq()
	}
	return 0
}

// NavigationPending is the page's (false before the browser started).
func (l *lazyPage) NavigationPending() bool {
	if p := l.started(); p != nil {
		return p.NavigationPending()
	}
	return false
}

func (l *lazyPage) OnNavigate(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.ready:
		if l.p != nil {
			l.p.OnNavigate(f)
		}
	default:
		l.onNav = append(l.onNav, f)
	}
}

func (l *lazyPage) Close() error {
	<-l.ready
	if l.p != nil {
		return l.p.Close()
	}
	return nil
}

// phases collects the time start-up spends by phase, for --verbose.
type phases struct {
	mu    sync.Mutex
	start time.Time
	list  []string
	out   io.Writer
}

func (ph *phases) add(name string, took time.Duration) {
	if ph == nil {
		return
	}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	ph.list = append(ph.list, fmt.Sprintf("%s %v", name, took.Round(time.Millisecond)))
}

// done prints the phases once, with the time since start.
func (ph *phases) done(what string) {
	if ph == nil {
		return
	}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	if ph.out == nil {
		return
	}
	fmt.Fprintf(ph.out, "pling mcp: start-up: %s; %s %v after start\n", strings.Join(ph.list, ", "), what,
		time.Since(ph.start).Round(time.Millisecond))
	ph.out = nil
}
