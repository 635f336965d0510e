// Command pling is Pling's command-line tool.
//
//	pling conform [--host native] [--verbose] DIR|FILE…   run conformance cases
//	pling version                                          print the protocol version
//
// Run "pling help COMMAND" for a command's flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pling-go/pling/runtime/conform"
	"github.com/pling-go/pling/schema"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"conform", "run conformance cases against a host", runConform},
		{"version", "print the Surface protocol version", func(_ context.Context, _ []string, stdout, _ io.Writer) int {
			fmt.Fprintln(stdout, schema.Protocol)
			return 0
		}},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "pling: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: pling COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.usage)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "pling help COMMAND" for a command's flags.`)
}

func runConform(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("host", "native", "the host to run on: native, node")
	dist := fs.String("dist", "dist", "the directory with pling.wasm and wasm_exec.js (make wasm builds it)")
	shim := fs.String("shim", "js-shim", "the js-shim directory (node host)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pling conform [--host H] DIR|FILE…")
		fmt.Fprintln(stderr, "Runs conformance cases (PLING.md §7.1) and exits 1 when any case fails.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	paths := fs.Args()
	if len(paths) == 0 {
		paths = []string{"e2e/conformance"}
	}
	var h conform.Host
	switch *host {
	case "native":
		h = conform.Native{}
	case "node":
		n := &conform.Node{Script: filepath.Join(*shim, "conform-host.js"), Dist: *dist}
		defer n.Close()
		h = n
	default:
		fmt.Fprintf(stderr, "pling conform: unknown host %q (have: native, node)\n", *host)
		return 2
	}
	cases, err := conform.LoadDir(paths...)
	if err != nil {
		fmt.Fprintf(stderr, "pling conform: %v\n", err)
		return 2
	}
	if len(cases) == 0 {
		fmt.Fprintf(stderr, "pling conform: no cases under %v\n", paths)
		return 2
	}
	var results []*conform.Result
	for _, c := range cases {
		results = append(results, conform.Run(ctx, h, c))
	}
	if _, failed := conform.Report(stdout, h.Name(), results); failed > 0 {
		return 1
	}
	return 0
}
