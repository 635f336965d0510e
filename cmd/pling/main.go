// Command pling is Pling's command-line tool: the demo, the demo site's
// server, the agent-side commands and the conformance runner.
//
//	pling demo [--dist DIR] [-v]
//	        serve the demo site, open it in headless Chromium and run a
//	        scripted agent session, printing a transcript
//	pling serve [--addr HOST:PORT] [--dist DIR] [--brotli Q] [--dir DIR] [--authority URL|embedded] [--gateway URL]
//	        serve the demo site (or with --dir your own pages) and the module over HTTP;
//	        with --authority, the pages follow an authority (its consent screen for delegations)
//	pling describe TARGET [--session TOKEN | --session-file PATH | --token-file PATH] [--json] [--max-records N] [--strict]
//	        describe what a page lets an agent do
//	pling check URL
//	        list a page's declaration mistakes with their fixes (exit 1 when any)
//	pling invoke TARGET CAPABILITY [--input JSON] [--record ID] [--id ID] [--resume TOKEN] [--json]
//	        invoke one capability through the agent client
//	pling mcp (--fixture PATH | TARGET | --session-name NAME) [--allow-origin O]… [--headed] [--session …] [--poll DURATION] [--verbose]
//	        serve a page's capabilities as MCP tools over stdio; a URL is a browsing session
//	pling session start [--name NAME] [--headed] [--user-data-dir DIR] URL | pling session stop [--name NAME]
//	        keep one browser tab across commands (--session-name NAME)
//	pling conform [--host native|wazero|node|chromium] [--dist DIR] [--strict] DIR|FILE…
//	        run conformance cases on a host
//	pling authority [--addr HOST:PORT] [--store sqlite:PATH|postgres://…] [--operator-keys FILE] [--audience ORIGIN=PATTERNS]…
//	        [--verification-uri URL] [--delegation-burst N] [--delegation-rate R]
//	        run the delegation authority (docs/authority.md)
//	pling delegate URL --scope PATTERN[,…] [--authority URL] [--ttl D] [--token-file F] [--agent NAME] [--json]
//	        ask the site's authority for a session, wait for a person's
//	        consent and store the token (0600) where describe, invoke and
//	        mcp find it
//	pling gateway [--addr HOST:PORT] --upstream URL [--models m1,m2] [--site-keys FILE] [--authority URL]
//	        run the OpenAI-compatible model gateway (docs/gateway.md)
//	pling version
//	        print the Surface protocol version
//
// A TARGET is a page URL (opened in headless Chromium), or fixture:PATH (a
// fixture page run in this process). With no arguments pling prints the
// usage on stderr and exits 2; "pling help" prints it on stdout, exit 0. Every command parses its flags with
// newFlags and parseFlags (flags.go): flags may come among the arguments,
// -h prints the usage and exits 0, a bad flag exits 2. Run "pling help
// COMMAND" for a command's flags. The benchmarks are a separate command,
// e2e/cmd/pling-bench.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/pling-go/pling/internal/cmdtable"
	"github.com/pling-go/pling/schema"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type command struct {
	name, usage string
	run         cmdtable.Func
}

// registry holds the commands; each command's file registers itself in
// init, so a new command is a new file.
var registry = cmdtable.Table{}

func register(c command) { registry.Add(c.name, c.usage, c.run) }

func commands() []cmdtable.Command { return registry.Sorted() }

func init() {
	register(command{"version", "print the Surface protocol version", func(_ context.Context, args []string, stdout, stderr io.Writer) int {
		fl := newFlags("version", stderr, "Usage: pling version", "Prints the Surface protocol version this pling speaks.")
		if exit, ok := parseNoArgs(fl, args, stderr); !ok {
			return exit
		}
		fmt.Fprintln(stdout, schema.Protocol)
		return 0
	}})
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return 0
	}
	if c, ok := registry[args[0]]; ok {
		return c.Run(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "pling: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: pling COMMAND [flags] [args]")
	fmt.Fprintln(w)
	registry.WriteList(w, 10)
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "pling help COMMAND" for a command's flags.`)
}
