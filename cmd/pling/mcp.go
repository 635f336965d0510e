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
	target, session string
	poll            time.Duration
	verbose         bool
}

// parseMCPArgs reads pling mcp's command line with its flag set (also
// what the docs' MCP client configurations are checked against); ok is
// false with the exit status when it is not a valid invocation.
func parseMCPArgs(args []string, stderr io.Writer) (a mcpArgs, exit int, ok bool) {
	fl := newFlags("mcp", stderr,
		"Usage: pling mcp (--fixture PATH | TARGET) [--session TOKEN | --session-file PATH] [--poll DURATION]",
		"Serves the capabilities the page exposes to the session as Model Context Protocol tools",
		"over stdio (JSON-RPC on stdin/stdout; logs on stderr). Every tool call is an invoke through",
		"the agent client and its recovery rules; the tool list follows the page, with",
		"notifications/tools/list_changed. A call that waits for a person sends notifications/progress",
		"when it carried a progressToken. If the page's browser dies, pling mcp says so and exits 1.",
		targetHelp,
		sessionHelp,
	)
	fixturePath := fl.String("fixture", "", "serve this fixture page (the same as TARGET fixture:PATH)")
	sessionFl := addSessionFlags(fl)
	poll := fl.Duration("poll", 5*time.Second, "describe the page this often to follow changes made without an invoke (0: only on tools/list and after invokes)")
	verbose := fl.Bool("verbose", false, "log every exchange to stderr")
	pos, exit, ok := parseFlags(fl, args)
	if !ok {
		return a, exit, false
	}
	session, ok := sessionToken(sessionFl, "mcp", stderr)
	if !ok {
		return a, 2, false
	}
	switch {
	case *fixturePath != "" && len(pos) == 0:
		a.target = "fixture:" + *fixturePath
	case *fixturePath == "" && len(pos) == 1:
		a.target = pos[0]
	default:
		fmt.Fprintln(stderr, "pling mcp: give one page: --fixture PATH or TARGET")
		fl.Usage()
		return a, 2, false
	}
	if *poll < 0 {
		fmt.Fprintf(stderr, "pling mcp: --poll must not be negative\n")
		return a, 2, false
	}
	a.session, a.poll, a.verbose = session, *poll, *verbose
	return a, 0, true
}

func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a, exit, ok := parseMCPArgs(args, stderr)
	if !ok {
		return exit
	}
	target, session := a.target, a.session
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	t, err := transportFor(ctx, target)
	if err != nil {
		fmt.Fprintf(stderr, "pling mcp: %v\n", err)
		return targetExit(err)
	}
	defer closeTransport(t)

	level := slog.LevelWarn
	if a.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	client := agent.New(t, agent.WithSession(session), agent.WithLogger(logger))
	bridge := plingmcp.NewBridge(client, plingmcp.WithImplementation("pling", schema.Protocol), plingmcp.WithLogger(logger))
	// Load the tools before serving: a page the session cannot describe
	// fails here, plainly, instead of in the first tools/list.
	if _, err := bridge.Refresh(ctx); err != nil {
		printFailure(stderr, "mcp", err)
		return 1
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if a.poll > 0 {
		go bridge.Watch(ctx, a.poll)
	}
	// A browser that died takes the page with it: every call would fail.
	// Say so once and exit non-zero, so that the MCP host sees the server
	// end (and may start it again) instead of a server that answers
	// nothing but failures.
	var gone atomic.Bool
	if g, ok := t.(interface{ Gone() <-chan struct{} }); ok {
		go func() {
			select {
			case <-g.Gone():
				gone.Store(true)
				fmt.Fprintln(stderr, "pling mcp: the browser is gone; nothing more can be sent to the page; exiting")
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	err = bridge.Server().Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(mcpStdin), Writer: nopWriteCloser{stdout}})
	if gone.Load() {
		return 1
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) && !errors.Is(err, sdk.ErrConnectionClosed) {
		fmt.Fprintf(stderr, "pling mcp: %v\n", err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
