package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/schema"
)

func init() {
	register(command{"mcp", "serve a page's capabilities as MCP tools over stdio", runMCP})
}

// mcpStdin is where pling mcp reads JSON-RPC from; tests replace it.
var mcpStdin io.Reader = os.Stdin

// mcpArgs is what pling mcp's command line says.
type mcpArgs struct {
	target, session, browserSession string
	authority                       string   // whose approval screen a host opens ("" none)
	origins                         []string // browser.open's: TARGET's, then each --allow-origin
	headed                          bool
	userDataDir                     string
	poll                            time.Duration
	verbose, browsing               bool
}

// parseMCPArgs reads pling mcp's command line with its flag set (also
// what the docs' MCP client configurations are checked against); ok is
// false with the exit status when it is not a valid invocation.
func parseMCPArgs(args []string, stderr io.Writer) (a mcpArgs, exit int, ok bool) {
	fl := newFlags("mcp", stderr,
		"Usage: pling mcp (--fixture PATH | TARGET | --session-name NAME) [--allow-origin ORIGIN]… [--headed] [--user-data-dir DIR]",
		"                 [--session TOKEN | --session-file PATH | --token-file PATH] [--authority URL] [--poll DURATION] [--verbose]",
		"Serves the capabilities the page exposes to the session as Model Context Protocol tools",
		"over stdio (JSON-RPC on stdin/stdout; logs on stderr). Every tool call is an invoke through",
		"the agent client and its recovery rules; the tool list follows the page, with",
		"notifications/tools/list_changed. A call that waits for a person sends notifications/progress",
		"when it carried a progressToken; one that waits for the authority's approval screen asks a host that",
		"takes URL elicitations to open it (--authority, else $"+authorityEnv+"). A value too long for a result is handed over whole as MCP",
		"resources, read in pages with resources/read. If the page's browser dies, pling mcp says so and exits 1.",
		"A page URL starts a browsing session: browser.open (on TARGET's origin and every --allow-origin),",
		"browser.back and browser.page (with the tabs, which browser.open {tab} switches to) beside the page's tools, which",
		"follow the page the tab shows; browser.view and browser.act reach what a page does not declare",
		"(unproven). The browser starts while the client connects.",
		targetHelp,
		sessionHelp,
	)
	fixturePath := fl.String("fixture", "", "serve this fixture page (the same as TARGET fixture:PATH)")
	sessionFl := addSessionFlags(fl)
	browserSession := addBrowserSessionFlag(fl)
	var origins []string
	fl.Func("allow-origin", "also let browser.open go to this origin (scheme://host[:port]); repeatable. A token goes only to its own origin", func(v string) error {
		o, err := plingmcp.Origin(v)
		if err != nil {
			return err
		}
		origins = append(origins, o)
		return nil
	})
	headed := fl.Bool("headed", false, "show the browser window, so a person sees the page, its approvals and handoffs (needs a display)")
	userDataDir := fl.String("user-data-dir", "", "keep the browser profile (logins, cookies, caches) in this directory")
	poll := fl.Duration("poll", 5*time.Second, "look this often whether the page changed without an invoke, and describe it when it did (in a browser: its DOM or a person's input moved, or a minute passed); 0: describe only on tools/list and after invokes")
	authURL := fl.String("authority", "", "the site's authority (default $"+authorityEnv+"): a host that takes URL elicitations is asked to open its approval screen for the person when a call waits for it")
	verbose := fl.Bool("verbose", false, "log every exchange to stderr, and the time start-up spent by phase")
	pos, exit, ok := parseFlags(fl, args)
	if !ok {
		return a, exit, false
	}
	session, ok := sessionToken(sessionFl, "mcp", "", stderr) // a stored token is chosen per origin, as pages load
	if !ok {
		return a, 2, false
	}
	var target string
	switch {
	case *fixturePath != "" && len(pos) == 0 && *browserSession == "":
		target = "fixture:" + *fixturePath
	case *fixturePath == "" && len(pos) == 1:
		target = pos[0]
	case *fixturePath == "" && len(pos) == 0 && *browserSession != "":
	default:
		return a, usageError(fl, stderr, "give one page: --fixture PATH, TARGET or --session-name NAME"), false
	}
	if *poll < 0 {
		fmt.Fprintf(stderr, "pling mcp: --poll must not be negative\n")
		return a, 2, false
	}
	if *authURL == "" {
		*authURL = os.Getenv(authorityEnv)
	}
	if *authURL != "" {
		if _, ok := plingmcp.ApprovalScreenURL(*authURL, "x"); !ok {
			fmt.Fprintf(stderr, "pling mcp: --authority must be an http(s) URL without credentials, query or fragment, not %q\n", *authURL)
			return a, 2, false
		}
	}
	browsing := *browserSession != "" || isPageURL(target)
	if !browsing && (*headed || *userDataDir != "" || len(origins) > 0) {
		fmt.Fprintln(stderr, "pling mcp: --headed, --user-data-dir and --allow-origin need a page URL or --session-name")
		return a, 2, false
	}
	if browsing && target != "" {
		o, err := plingmcp.Origin(target)
		if err != nil {
			fmt.Fprintf(stderr, "pling mcp: %v\n", err)
			return a, 2, false
		}
		origins = append([]string{o}, origins...)
	}
	a = mcpArgs{target: target, session: session, browserSession: *browserSession, origins: origins, authority: *authURL,
		headed: *headed, userDataDir: *userDataDir, poll: *poll, verbose: *verbose, browsing: browsing}
	return a, 0, true
}

func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	started := time.Now()
	a, exit, ok := parseMCPArgs(args, stderr)
	if !ok {
		return exit
	}
	target, session, browsing := a.target, a.session, a.browsing
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	level := slog.LevelWarn
	if a.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	var ph *phases
	if a.verbose {
		ph = &phases{start: started, out: stderr}
	}

	var t agent.Transport
	bopts := []plingmcp.Option{plingmcp.WithImplementation("pling", schema.Protocol), plingmcp.WithLogger(logger)}
	if a.authority != "" {
		bopts = append(bopts, plingmcp.WithApprovalScreen(a.authority))
	}
	var lazy *lazyPage
	if browsing {
		origins, err := a.browsingOrigins()
		if err != nil {
			fmt.Fprintf(stderr, "pling mcp: %v\n", err)
			return 1
		}
		lazy = startLazy(a.opener(ctx, ph))
		t = lazy
		defer lazy.Close()
		bopts = append(bopts, plingmcp.WithBrowser(lazy, origins...))
	} else {
		var err error
		if t, err = transportFor(ctx, target); err != nil {
			fmt.Fprintf(stderr, "pling mcp: %v\n", err)
			return targetExit(err)
		}
		defer closeTransport(t)
	}

	clientSession := session
	if browsing {
		// The guard sends each request to the document the bridge checked,
		// with the token for its origin only; the client sends none.
		guard := plingmcp.NewGuard(lazy, newOriginTokens("mcp", session, tokenTarget(a.browserSession, target), stderr).forOrigin)
		t, clientSession = guard, ""
		bopts = append(bopts, plingmcp.WithGuard(guard))
	}
	client := agent.New(t, agent.WithSession(clientSession), agent.WithLogger(logger))
	bridge := plingmcp.NewBridge(client, bopts...)
	if !browsing {
		// Load the tools before serving: a page the session cannot describe
		// fails here, plainly, instead of in the first tools/list.
		if _, err := bridge.Refresh(ctx); err != nil {
			printFailure(stderr, "mcp", err)
			return 1
		}
	}

	var gone atomic.Bool
	watchGone := func(g interface{ Gone() <-chan struct{} }) {
		// A browser that died takes the page with it: every call would
		// fail. Say so once and exit non-zero, so that the MCP host sees
		// the server end (and may start it again) instead of a server
		// that answers nothing but failures.
		select {
		case <-g.Gone():
			gone.Store(true)
			fmt.Fprintln(stderr, "pling mcp: the browser is gone; nothing more can be sent to the page; exiting")
			cancel()
		case <-ctx.Done():
		}
	}
	prewarmed := make(chan struct{}) // the first describe is done (browsing)
	if !browsing {
		close(prewarmed)
	}
	launched := make(chan struct{}) // the browser started, or failed to (browsing)
	if browsing {
		go func() {
			p, err := lazy.wait(ctx)
			if err != nil {
				if ctx.Err() == nil {
					gone.Store(true)
					fmt.Fprintf(stderr, "pling mcp: %v\n", err)
					cancel()
				}
				close(launched)
				return
			}
			close(launched)
			// Load the module and the tools while the client connects. (A
			// tools/list that came meanwhile waits for this describe.)
			t0 := time.Now()
			if _, err := bridge.Refresh(ctx); err != nil && ctx.Err() == nil {
				printFailure(stderr, "mcp", err)
			}
			ph.add("first describe", time.Since(t0))
			close(prewarmed)
			watchGone(p)
		}()
	} else if g, ok := t.(interface{ Gone() <-chan struct{} }); ok {
		go watchGone(g)
	}
	if a.poll > 0 {
		go bridge.Watch(ctx, a.poll)
	}
	server := bridge.Server()
	if ph != nil {
		server.AddReceivingMiddleware(ph.middleware(prewarmed))
	}
	err := server.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(mcpStdin), Writer: nopWriteCloser{stdout}})
	if browsing {
		// A client that hung up at once (stdin closed) must still learn
		// that the browser could not start: wait (bounded) for the launch
		// to end either way before choosing the exit code.
		select {
		case <-launched:
		case <-time.After(5 * time.Second):
		}
	}
	if gone.Load() {
		return 1
	}
	if err != nil && !endOfInput(err) {
		fmt.Fprintf(stderr, "pling mcp: %v\n", err)
		return 1
	}
	return 0
}

// endOfInput reports whether err only says the client hung up or the
// command was told to stop: a normal end of an MCP server on stdio.
func endOfInput(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, sdk.ErrConnectionClosed)
}

// browsingOrigins are the origins browser.open may go to: TARGET's and
// the --allow-origin ones (a.origins), and with --browser-session and no
// TARGET the session page's, read from the session file before the
// bridge is made.
func (a *mcpArgs) browsingOrigins() ([]string, error) {
	origins := a.origins
	if a.browserSession != "" && a.target == "" {
		s, err := readBrowserSession(a.browserSession)
		if err != nil {
			return nil, err
		}
		if o, err := plingmcp.Origin(s.URL); err == nil {
			origins = append(origins, o)
		}
	}
	return origins, nil
}

// opener starts the browser of a browsing session when the first tool
// needs it: the one --browser-session names (its tab, then TARGET), or a
// new one with native WebMCP on, so that a page's own WebMCP tools reach
// the agent too (agent/mcp/webmcp.go).
func (a *mcpArgs) opener(ctx context.Context, ph *phases) func() (*cdp.Page, error) {
	return func() (*cdp.Page, error) {
		if a.browserSession != "" {
			s, err := readBrowserSession(a.browserSession)
			if err != nil {
				return nil, err
			}
			p, err := cdp.Start(ctx, "", cdp.Options{Remote: s.CDP, AttachTab: s.Tab, Timing: ph.add})
			if err == nil && a.target != "" {
				_, err = p.Navigate(ctx, a.target)
			}
			return p, err
		}
		return cdp.Start(ctx, a.target, cdp.Options{Remote: os.Getenv("PLING_CDP"), Headed: a.headed, UserDataDir: a.userDataDir, Timing: ph.add,
			Flags: map[string]any{"enable-features": cdp.WebMCPFeatures}})
	}
}

// middleware times the first tools/list, which waits for the browser and
// the first describe (the module's start), and prints the phases once
// that describe is done (prewarmed closed) or a second later.
func (ph *phases) middleware(prewarmed <-chan struct{}) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			t0 := time.Now()
			res, err := next(ctx, method, req)
			if method == "tools/list" {
				ph.add("tools/list waited", time.Since(t0))
				select {
				case <-prewarmed:
				case <-time.After(time.Second):
				}
				ph.done("first tools/list answered")
			}
			return res, err
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
