// Command pling is Pling's command-line tool.
//
//	pling conform [--host native] [--verbose] DIR|FILE…   run conformance cases
//	pling version                                          print the protocol version
//
// Run "pling help COMMAND" for a command's flags.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/pling-go/pling/schema"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// registry holds the commands; each command's file registers itself in
// init, so a new command is a new file.
var registry = map[string]command{}

func register(c command) { registry[c.name] = c }

func commands() []command {
	out := make([]command, 0, len(registry))
	for _, c := range registry {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func init() {
	register(command{"version", "print the Surface protocol version", func(_ context.Context, _ []string, stdout, _ io.Writer) int {
		fmt.Fprintln(stdout, schema.Protocol)
		return 0
	}})
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
