package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
)

// Tokens per origin (docs/agent.md "Security"): a token goes only to a
// page whose origin is its audience, chosen after the page has loaded
// (from the origin the browser says it ended on, redirects included).

// originTokens is a command's session tokens by page origin: the token
// given (--session, --session-file, $PLING_SESSION) for the origin it is
// for — its audience claim, else the origin of the URL it was given with —
// and else the token pling delegate stored for that origin.
type originTokens struct {
	explicit    string
	explicitFor string // the origin the explicit token is for
	cmd         string
	stderr      io.Writer

	mu     sync.Mutex
	stored map[string]string // origin → stored token ("" none), read once
}

// newOriginTokens is the token source of a command whose explicit token
// (maybe "") came with target (a page URL, or "" when unknown).
func newOriginTokens(cmd, explicit, target string, stderr io.Writer) *originTokens {
	o := &originTokens{explicit: explicit, cmd: cmd, stderr: stderr, stored: map[string]string{}}
	if aud, ok := plingmcp.TokenAudience(explicit); ok {
		o.explicitFor = aud
	} else if or, err := pageOrigin(target); err == nil {
		o.explicitFor = or
	}
	return o
}

// forOrigin is the token for a page of origin ("" for none).
func (o *originTokens) forOrigin(origin string) string {
	if o.explicit != "" {
		if origin == o.explicitFor {
			return o.explicit
		}
		return ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if tok, ok := o.stored[origin]; ok {
		return tok
	}
	tok := ""
	if path, err := tokenFileFor(origin); err == nil {
		if _, err := os.Lstat(path); err == nil {
			if t, err := readSessionFile(path); err == nil {
				tok = t
				fmt.Fprintf(o.stderr, "pling %s: using the session stored in %s for %s\n", o.cmd, path, origin)
			} else {
				fmt.Fprintf(o.stderr, "pling %s: %v\n", o.cmd, err)
			}
		}
	}
	o.stored[origin] = tok
	return tok
}

// pinnedTransport is what describe and invoke send through: for a page in
// the browser, a guard pinned to the document the tab shows now (read
// from the browser after the load), with the token for its origin; for a
// fixture, t itself, and session is the token to send.
func pinnedTransport(ctx context.Context, t agent.Transport, toks *originTokens) (tr agent.Transport, session string, err error) {
	p, ok := t.(*cdp.Page)
	if !ok {
		return t, toks.explicit, nil
	}
	doc, err := p.Document(ctx)
	if err != nil {
		return nil, "", err
	}
	if toks.explicit != "" && doc.Origin != toks.explicitFor {
		// The token is never sent to another origin; going on without it
		// would answer as an anonymous caller (nothing exposed, "describe
		// again"), which hides why.
		return nil, "", tokenOriginError(toks.explicitFor, doc.Origin)
	}
	g := plingmcp.NewGuard(p, toks.forOrigin)
	g.Pin(doc)
	return g, "", nil
}

// tokenOriginError says why a session token given for one origin is not
// used on a page of another.
func tokenOriginError(tokenFor, pageOrigin string) error {
	if tokenFor == "" {
		return fmt.Errorf("the session token names no origin (no audience claim) and the page is on %s: it is not sent; "+
			"give the token with the page's URL, or get one for %s with pling delegate", pageOrigin, pageOrigin)
	}
	return fmt.Errorf("the session token is for %s, but the page is on %s (after any redirect): a token is never sent to another origin; "+
		"get one for %s with pling delegate", tokenFor, pageOrigin, pageOrigin)
}

// tokenTarget is the URL an explicit token was given with: the command's
// TARGET, else the page a browser session started on.
func tokenTarget(browserSession, target string) string {
	if target != "" || browserSession == "" {
		return target
	}
	if s, err := readBrowserSession(browserSession); err == nil {
		return s.URL
	}
	return ""
}
