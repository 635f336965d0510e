package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
)

// The security path of a browsing session (docs/agent.md "Security"): the
// bridge checks the document the tab shows — its origin read from the
// browser, not from the page's script — and pins it in the Guard; every
// Surface request goes to that document only, with the token whose
// audience is its origin, or to nothing.

// Document is one document a tab shows, as the browser names it.
type Document = cdp.Document

// DocumentBrowser is a Browser that says which document the tab shows,
// from the browser (DevTools), and sends a request to one document only
// (refusing, with an error that wraps agent.ErrNotSent, once it is gone).
// *cdp.Page is one.
type DocumentBrowser interface {
	Browser
	Document(ctx context.Context) (Document, error)
	RoundTripTo(ctx context.Context, doc Document, request []byte) ([]byte, error)
}

// TokenFunc returns the session token for a page origin, "" for none. A
// token is attached only to a request for a document of that origin.
type TokenFunc func(origin string) string

// Guard is the transport of a browsing bridge (WithGuard): it sends a
// request only to the document the bridge last checked and found allowed,
// with the token for that document's origin; with no such document (the
// tab navigated, the check failed, the page is outside the allowed sites)
// it sends nothing.
type Guard struct {
	b      DocumentBrowser
	tokens TokenFunc

	mu      sync.Mutex
	doc     Document
	pinned  bool
	pling   bool          // the pinned document speaks Pling: Surface requests may go to it
	left    string        // the origin the tab went to, when it left the allowed sites
	settled chan struct{} // while a check after a navigation runs: closed when it ends
}

// settleWait bounds how long a request waits for the check of a page the
// tab just navigated to (it is sent only if that check passes).
const settleWait = 10 * time.Second

// NewGuard returns the guard of a browsing session on b; tokens gives the
// token per origin (nil: no tokens).
func NewGuard(b DocumentBrowser, tokens TokenFunc) *Guard {
	if tokens == nil {
		tokens = func(string) string { return "" }
	}
	return &Guard{b: b, tokens: tokens}
}

// WithGuard makes g the guard the bridge pins checked documents in; the
// bridge's client must send through g.
func WithGuard(g *Guard) Option { return func(o *options) { o.guard = g } }

// LeftSiteError is the error of a request the guard refused: the tab does
// not show a document the bridge checked and allowed. Nothing was sent.
type LeftSiteError struct{ Origin string }

func (e *LeftSiteError) Error() string {
	if e.Origin != "" {
		return fmt.Sprintf("the tab left the allowed site: it shows %s now; nothing was sent (call browser.page)", e.Origin)
	}
	return "the tab shows no page checked for this session (it navigated, or the check failed); nothing was sent (call browser.page)"
}

func (e *LeftSiteError) Unwrap() error { return agent.ErrNotSent }

// Pin sends every request to doc until the bridge checks another
// document: for a command that checked doc itself (pling describe and
// invoke read it from the browser after the page loaded).
func (g *Guard) Pin(doc Document) { g.pin(doc) }

func (g *Guard) pin(doc Document) {
	g.mu.Lock()
	g.doc, g.pinned, g.pling, g.left = doc, true, true, ""
	g.settleLocked()
	g.mu.Unlock()
}

// pinPage pins doc, checked and allowed but without Pling, for its own
// WebMCP tools only: no Surface request (and no token) goes to it.
func (g *Guard) pinPage(doc Document) {
	g.mu.Lock()
	g.doc, g.pinned, g.pling, g.left = doc, true, false, ""
	g.settleLocked()
	g.mu.Unlock()
}

// unpin sends nothing until a check passes; left is the origin the tab
// shows when the check found it outside the allowed sites.
func (g *Guard) unpin(left string) {
	g.mu.Lock()
	g.doc, g.pinned, g.pling, g.left = Document{}, false, false, left
	g.settleLocked()
	g.mu.Unlock()
}

// navigating unpins at once and makes requests wait (at most settleWait)
// for the check that follows.
func (g *Guard) navigating() {
	g.mu.Lock()
	g.doc, g.pinned, g.pling, g.left = Document{}, false, false, ""
	if g.settled == nil {
		g.settled = make(chan struct{})
	}
	g.mu.Unlock()
}

func (g *Guard) settleLocked() {
	if g.settled != nil {
		close(g.settled)
		g.settled = nil
	}
}

// current is the checked document, once a check under way has ended (at
// most settleWait): a request right after a navigation goes only if the
// new page's check passes. pling says whether it speaks Pling.
func (g *Guard) current(ctx context.Context) (doc Document, pling bool, err error) {
	g.mu.Lock()
	doc, pinned, pling, left, settled := g.doc, g.pinned, g.pling, g.left, g.settled
	g.mu.Unlock()
	if settled != nil {
		t := time.NewTimer(settleWait)
		select {
		case <-settled:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		g.mu.Lock()
		doc, pinned, pling, left = g.doc, g.pinned && g.settled == nil, g.pling, g.left
		g.mu.Unlock()
	}
	if !pinned {
		return Document{}, false, &LeftSiteError{Origin: left}
	}
	return doc, pling, nil
}

// PageDocument is the document a call of the page's own WebMCP tool may
// go to: the one the bridge checked and found allowed (with Pling or
// without), waiting like RoundTrip for a check under way. Otherwise it is
// a *LeftSiteError, and nothing may be sent.
func (g *Guard) PageDocument(ctx context.Context) (Document, error) {
	doc, _, err := g.current(ctx)
	return doc, err
}

// RoundTrip implements agent.Transport.
func (g *Guard) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	doc, pling, err := g.current(ctx)
	if err != nil {
		return nil, err
	}
	if !pling {
		// An allowed page without Pling: its own WebMCP tools only.
		return nil, &LeftSiteError{}
	}
	req, err := withSession(request, tokenFor(g.tokens(doc.Origin), doc.Origin))
	if err != nil {
		return nil, fmt.Errorf("pling mcp: %v: %w", err, agent.ErrNotSent)
	}
	return g.b.RoundTripTo(ctx, doc, req)
}

// tokenFor is tok when it may go to origin: a pl1 token whose audience
// claim names another origin never does (the claim is read, not
// verified: it only ever withholds a token).
func tokenFor(tok, origin string) string {
	if tok == "" {
		return ""
	}
	if aud, ok := TokenAudience(tok); ok && aud != origin {
		return ""
	}
	return tok
}

// TokenAudience reads the audience claim of a pl1 token without
// verifying it; ok is false for a token of another format.
func TokenAudience(tok string) (aud string, ok bool) {
	var c struct {
		Aud string `json:"aud"`
	}
	if !tokenClaims(tok, &c) {
		return "", false
	}
	return strings.ToLower(c.Aud), true
}

// tokenClaims decodes the claims of a pl1 token into c without verifying
// it (whoever the token is for checks it); false for a token of another
// format or claims that do not decode.
func tokenClaims(tok string, c any) bool {
	parts := strings.Split(tok, ".")
	if len(parts) != 4 || parts[0] != "pl1" {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	return err == nil && json.Unmarshal(raw, c) == nil
}

// withSession sets the request's session to tok ("" removes it): the
// client sends none; the guard alone chooses.
func withSession(request []byte, tok string) ([]byte, error) {
	var m map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(request))
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("the request is not one JSON object")
	}
	delete(m, "session")
	if tok != "" {
		lit, _ := json.Marshal(tok)
		m["session"] = lit
	}
	return json.Marshal(m)
}
