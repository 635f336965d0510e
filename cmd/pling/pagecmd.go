package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/pling-go/pling/agent"
)

// pageCmd is the plumbing describe and invoke share: the session flags
// (--session, --session-file, --token-file, $PLING_SESSION), the browser
// session (--session-name), and the page they open, with the session
// token pinned to the origin the page ends on.
type pageCmd struct {
	fl             *flag.FlagSet
	stderr         io.Writer
	session        sessionFlags
	browserSession *string

	token   string // the session token from the flags, "" for the stored one
	target0 string // the target as given, before the browser session's default
}

// addPageFlags registers the session and browser-session flags on fl.
func addPageFlags(fl *flag.FlagSet, stderr io.Writer) *pageCmd {
	return &pageCmd{fl: fl, stderr: stderr, session: addSessionFlags(fl), browserSession: addBrowserSessionFlag(fl)}
}

// parse parses args and returns want positional arguments, TARGET first
// ("" for the browser session's tab); wantWhat names them for a usage
// error. When ok is false the command ends with exit.
func (c *pageCmd) parse(args []string, want int, wantWhat string) (pos []string, exit int, ok bool) {
	pos, exit, ok = parseFlags(c.fl, args)
	if !ok {
		return nil, exit, false
	}
	// A stored token is chosen by the origin the page ends on (open).
	if c.token, ok = sessionToken(c.session, c.fl.Name(), "", c.stderr); !ok {
		return nil, 2, false
	}
	c.target0 = firstArg(pos)
	pos = sessionArgs(*c.browserSession, pos, want)
	if len(pos) != want {
		return nil, usageError(c.fl, c.stderr, "want %s, got %d arguments", wantWhat, len(pos)), false
	}
	return pos, 0, true
}

// open opens target (in the browser session's tab when one is named) and
// returns the page and the transport to send through, with the session
// token for the origin the page ends on; the caller closes the page
// (closeTransport). When ok is false the command ends with exit.
func (c *pageCmd) open(ctx context.Context, target string) (page, tr agent.Transport, session string, exit int, ok bool) {
	page, err := openTarget(ctx, *c.browserSession, target)
	if err != nil {
		fmt.Fprintf(c.stderr, "pling %s: %v\n", c.fl.Name(), err)
		return nil, nil, "", targetExit(err), false
	}
	tr, session, err = pinnedTransport(ctx, page, newOriginTokens(c.fl.Name(), c.token, tokenTarget(*c.browserSession, c.target0), c.stderr))
	if err != nil {
		closeTransport(page)
		fmt.Fprintf(c.stderr, "pling %s: %v\n", c.fl.Name(), err)
		return nil, nil, "", 1, false
	}
	return page, tr, session, 0, true
}
