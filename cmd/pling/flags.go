package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/pling-go/pling/internal/cliflags"
)

// newFlags is a command's flag set (cliflags.New): the first usage line
// is "Usage: pling NAME …".
func newFlags(name string, stderr io.Writer, usage ...string) *flag.FlagSet {
	return cliflags.New(name, stderr, usage...)
}

// parseFlags parses a command's arguments (cliflags.Parse): flags may come
// among the positional ones; ok is false when parsing ends the command,
// exit its status (0 after -h, 2 for a bad flag).
func parseFlags(fl *flag.FlagSet, args []string) (pos []string, exit int, ok bool) {
	return cliflags.Parse(fl, args)
}

// parseNoArgs is parseFlags for a command that takes no positional
// argument: one is a usage error (exit 2), said on stderr.
func parseNoArgs(fl *flag.FlagSet, args []string, stderr io.Writer) (exit int, ok bool) {
	pos, exit, ok := parseFlags(fl, args)
	if ok && len(pos) > 0 {
		fmt.Fprintf(stderr, "pling %s: unexpected arguments %q\n", fl.Name(), pos)
		return 2, false
	}
	return exit, ok
}

// usageError says on stderr what is wrong with a command's arguments
// ("pling NAME: …"), then prints its usage; it returns the exit status of
// a usage error, 2.
func usageError(fl *flag.FlagSet, stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "pling %s: %s\n", fl.Name(), fmt.Sprintf(format, args...))
	fl.Usage()
	return 2
}

// isPageURL says whether s is an http:// or https:// URL, as the
// commands that load one page (check, session start) take.
func isPageURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}
