package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent"
)

// Document is one document a tab shows, as the browser (DevTools) names
// it, never as the page's script says: its tab, its main frame, the
// loader that loaded it, its URL and origin, and the system-unique id of
// its JavaScript context. A navigation of any kind (a link, a redirect,
// location from script, a new document) gives the tab a new loader and a
// new context, so a request tied to a Document never reaches the next
// one (docs/agent.md "Security").
type Document struct {
	Tab     string `json:"tab"`
	Frame   string `json:"frame"`
	Loader  string `json:"loader"`
	URL     string `json:"url"`
	Origin  string `json:"origin"`
	Context string `json:"-"`
}

// ErrDocumentGone is the error of a request for a Document the tab no
// longer shows; it wraps agent.ErrNotSent: nothing reached any page.
var ErrDocumentGone = fmt.Errorf("the document the request was for is gone (the tab navigated): %w", agent.ErrNotSent)

// mainContext is the default JavaScript context of a tab's main frame, as
// Runtime.executionContextCreated reported it.
type mainContext struct {
	frame, unique, origin string
}

// noteContext records the default (main-world) script context of a
// frame of tab, as the browser reported it; Document picks the main
// frame's.
func (p *Page) noteContext(tabID string, e *cdpruntime.EventExecutionContextCreated) {
	var aux struct {
		FrameID   string `json:"frameId"`
		IsDefault bool   `json:"isDefault"`
	}
	if e.Context == nil || json.Unmarshal(e.Context.AuxData, &aux) != nil || !aux.IsDefault || aux.FrameID == "" {
		return
	}
	p.mu.Lock()
	if p.contexts == nil {
		p.contexts = map[string]map[string]mainContext{}
	}
	if p.contexts[tabID] == nil {
		p.contexts[tabID] = map[string]mainContext{}
	}
	p.contexts[tabID][aux.FrameID] = mainContext{frame: aux.FrameID, unique: e.Context.UniqueID, origin: e.Context.Origin}
	p.mu.Unlock()
}

// forgetContext drops a destroyed context.
func (p *Page) forgetContext(tabID, unique string) {
	p.mu.Lock()
	for f, c := range p.contexts[tabID] {
		if c.unique == unique {
			delete(p.contexts[tabID], f)
		}
	}
	p.mu.Unlock()
}

// Document reads the document the current tab shows from the browser:
// Page.getFrameTree for the main frame, its loader, URL and security
// origin, and the context the browser reported for it. Any failure, or a
// context whose origin is not the frame's, is an error: the caller treats
// the tab as showing nothing it may use.
func (p *Page) Document(ctx context.Context) (Document, error) {
	tab := p.cur()
	tctx, cancel := p.bounded(ctx, tab)
	defer cancel()
	return p.document(tctx, tab)
}

func (p *Page) document(tctx, tab context.Context) (Document, error) {
	tabID := ""
	if c := chromedp.FromContext(tab); c != nil && c.Target != nil {
		tabID = string(c.Target.TargetID)
	}
	before := p.contextOf(tabID)
	p.frameReads.Add(1)
	tree, err := chromedp.Call(tctx, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		return Document{}, fmt.Errorf("cdp: reading the tab's frame: %w", err)
	}
	if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return Document{}, errors.New("cdp: the tab has no main frame")
	}
	f := tree.FrameTree.Frame
	c, ok := before[string(f.ID)]
	after := p.contextOf(tabID)
	if !ok || after[string(f.ID)] != c {
		return Document{}, errors.New("cdp: the tab's document has no settled script context (it is navigating)")
	}
	origin := strings.ToLower(f.SecurityOrigin)
	if c.origin != "" && strings.ToLower(c.origin) != origin {
		return Document{}, fmt.Errorf("cdp: the tab's frame (%s) and its script context (%s) disagree: it is navigating", origin, c.origin)
	}
	url := f.URL + f.URLFragment
	return Document{Tab: tabID, Frame: string(f.ID), Loader: string(f.LoaderID), URL: url, Origin: origin, Context: c.unique}, nil
}

// Same reports whether d and o are one document (its URL may differ: a
// fragment or history.pushState changes it within the document).
func (d Document) Same(o Document) bool {
	return d.Tab == o.Tab && d.Frame == o.Frame && d.Loader == o.Loader && d.Origin == o.Origin && d.Context == o.Context
}

func (p *Page) contextOf(tabID string) map[string]mainContext {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]mainContext, len(p.contexts[tabID]))
	for k, v := range p.contexts[tabID] {
		out[k] = v
	}
	return out
}

// RoundTripTo is RoundTrip for one document: right before the request
// goes out it reads the tab's document from the browser again and sends
// only if it is still doc (same tab, frame, loader, origin and context),
// and then evaluates in doc's own script context, which the browser
// refuses once that document is gone. Otherwise it fails with
// ErrDocumentGone and nothing is sent.
func (p *Page) RoundTripTo(ctx context.Context, doc Document, request []byte) ([]byte, error) {
	return p.roundTrip(ctx, request, &doc)
}

// checkBound is the check of a request evaluated in doc's own script
// context (RoundTripTo, ExecuteWebMCP): the current tab shows doc. The
// browser refuses an evaluation in a context that is gone, so what the
// check adds is that doc's context is still the one the tab's main frame
// runs; when the browser's own events say so (the context it reported
// for the main frame, which it reports destroyed or cleared when the
// frame's document goes), that is known without a round trip. Anything
// else is read from the browser (checkDocument). The events are the
// browser's, in the order it sent them, never the page's words: a
// navigation the events have not told of yet is one the frame tree read
// could miss in the same way, between the read and the evaluation.
func (p *Page) checkBound(ctx, tab context.Context, doc *Document) error {
	tabID := ""
	if c := chromedp.FromContext(tab); c != nil && c.Target != nil {
		tabID = string(c.Target.TargetID)
	}
	if doc.Context != "" && doc.Tab == tabID && doc.Frame == tabID {
		p.mu.Lock()
		c, ok := p.contexts[tabID][doc.Frame]
		p.mu.Unlock()
		if ok && c.unique == doc.Context && strings.ToLower(c.origin) == doc.Origin {
			return nil
		}
	}
	return p.checkDocument(ctx, tab, doc)
}

// onDocument starts a read of doc: the browser is still there and the
// current tab shows doc (else ErrDocumentGone). It returns the tab and
// the tab's context bounded by the page's timeout and ended with ctx;
// the caller calls cancel when it is done.
func (p *Page) onDocument(ctx context.Context, doc *Document) (tab, tctx context.Context, cancel context.CancelFunc, err error) {
	if err := p.goneErr(); err != nil {
		return nil, nil, nil, err
	}
	tab = p.cur()
	if err := p.checkDocument(ctx, tab, doc); err != nil {
		return nil, nil, nil, err
	}
	tctx, cancel = p.bounded(ctx, tab)
	return tab, tctx, cancel, nil
}

// checkDocument reads from the browser that the current tab shows doc:
// the check before an input event (act.go), which no script context
// bounds, and checkBound's when the events do not settle it.
func (p *Page) checkDocument(ctx, tab context.Context, doc *Document) error {
	tctx, cancel := p.bounded(ctx, tab)
	defer cancel()
	now, err := p.document(tctx, tab)
	if err != nil || !now.Same(*doc) || doc.Context == "" {
		return ErrDocumentGone
	}
	return nil
}
