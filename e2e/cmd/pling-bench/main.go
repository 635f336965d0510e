// Command pling-bench measures Pling side by side, as ratios; it is the
// benchmark half of what was the pling command, kept beside the tests
// because it drives the same hosts they do (the test module on Node and
// wazero, the pling serve handler in Chromium) and installs a polyfill
// from npm at run time, none of which a user of pling needs.
//
//	pling-bench hosts [--dist DIR] [--shim DIR] [--n N] [--caps N]
//	        the module on every host in one run: sizes, cold start,
//	        describe and invoke as ratios to native (make bench-hosts)
//	pling-bench browser [--dist DIR] [--out FILE] [--only STEPS] …
//	        the shim and the module in Chromium beside the WebMCP
//	        polyfill, as ratios; JSON and an SVG chart (make bench-browser)
//	pling-bench agent [--runs N] [--tasks NAMES] [--dist DIR] [--pling BIN] …
//	        scripted agent tasks on the demo site through pling mcp and
//	        through @playwright/mcp (installed from npm at run time), one
//	        MCP client for both; JSON, Markdown and an SVG chart
//	        (make bench-agent)
//	pling-bench rows [--n N] [--dist DIR] [--pling BIN] [--out FILE]
//	        a row action on an order page of 2,000 and 10,000 rows through
//	        pling mcp and in the page's own script, side by side, and the
//	        records reader's runs per describe; JSON (make bench-rows)
//	pling-bench authority [--d D] [--clients N] [--dist DIR] [--n N]
//	        the authority's lease and write throughput on SQLite and
//	        PostgreSQL with 1 and 3 instances, and the shared replay
//	        check's cost in Chromium; JSON and Markdown (make bench-authority)
//	pling-bench modsize [--pkg PKG] [--tags TAGS] [--wasm FILE] [--out FILE]
//	        what the module is made of: its sections, and its function
//	        bodies by Go package and by part, from its own name section;
//	        JSON (make bench-modsize)
//	pling-bench docs [--artifacts DIR] [--doc FILE] [BLOCK…]
//	        the generated figures of docs/benchmarks.md from
//	        e2e/artifacts/*.json, each with its command and date (every
//	        make bench-* that writes an artifact runs it)
//
// Run "pling-bench COMMAND -h" for a command's flags.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/pling-go/pling/internal/cmdtable"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// registry holds the commands, one place to read them all.
var registry = cmdtable.Table{}

func init() {
	registry.Add("hosts", "measure the module on every host, side by side, as ratios to native", runBench)
	registry.Add("agent", "scripted agent tasks through pling mcp and @playwright/mcp, as ratios (e2e/artifacts/bench-agent.*)", runBenchAgent)
	registry.Add("authority", "the authority's lease and write throughput on SQLite and PostgreSQL, 1 and 3 instances, and the shared replay check's cost in Chromium, as ratios", runBenchAuthority)
	registry.Add("browser", "measure the shim and the module in Chromium beside the WebMCP polyfill, as ratios", runBenchBrowser)
	registry.Add("docs", "write the generated figures of docs/benchmarks.md from e2e/artifacts/*.json (each make bench-* runs it)", runBenchDocs)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if c, ok := registry[args[0]]; ok {
			return c.Run(ctx, args[1:], stdout, stderr)
		}
	}
	w := stdout
	code := 0
	if len(args) > 0 && args[0] != "help" && args[0] != "-h" && args[0] != "--help" {
		fmt.Fprintf(stderr, "pling-bench: unknown command %q\n\n", args[0])
		w, code = stderr, 2
	}
	fmt.Fprintln(w, "Usage: pling-bench COMMAND [flags]")
	fmt.Fprintln(w)
	registry.WriteList(w, 9)
	return code
}

// failer is how a command fails: it prints "pling-bench CMD: " and the
// message on stderr, and returns the exit status 1.
func failer(stderr io.Writer, cmd string) func(format string, a ...any) int {
	return func(format string, a ...any) int {
		fmt.Fprintf(stderr, "pling-bench "+cmd+": "+format+"\n", a...)
		return 1
	}
}

// progressTo prints a command's progress on stderr, a line at a time
// after prefix.
func progressTo(stderr io.Writer, prefix string) func(format string, a ...any) {
	return func(format string, a ...any) { fmt.Fprintf(stderr, prefix+format+"\n", a...) }
}

// serveLoopback serves h on a free loopback port until stop is called
// and returns its address (http://127.0.0.1:PORT): the pages, sites and
// module every benchmark drives are served this way.
func serveLoopback(h http.Handler) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String(), func() { hs.Close() }, nil
}
