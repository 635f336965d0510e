package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlags is a command's flag set: its errors go to stderr, and its
// usage (-h, or a bad flag) prints the given lines, then the flags. The
// first line is "Usage: pling NAME …".
func newFlags(name string, stderr io.Writer, usage ...string) *flag.FlagSet {
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		for _, l := range usage {
			fmt.Fprintln(stderr, l)
		}
		fl.PrintDefaults()
	}
	return fl
}

// parseFlags parses a command's arguments, flags before, between or after
// the positional ones. It returns the positional arguments and ok; when
// parsing ends the command, ok is false and exit is its status: 0 after
// -h (the usage is printed), 2 for a bad flag.
func parseFlags(fl *flag.FlagSet, args []string) (pos []string, exit int, ok bool) {
	pos, err := parseInterspersed(fl, args)
	switch {
	case err == nil:
		return pos, 0, true
	case errors.Is(err, flag.ErrHelp):
		return nil, 0, false
	}
	return nil, 2, false
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

// parseInterspersed parses flags that come before, between or after the
// positional arguments ("pling invoke TARGET CAP --input {}"), which the
// flag package alone stops at; "--" ends the flags.
func parseInterspersed(fl *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fl.Parse(args); err != nil {
			return nil, err
		}
		rest := fl.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
