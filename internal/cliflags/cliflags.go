// Package cliflags is how the repository's commands (pling, pling-bench)
// read their flags: one flag set per command whose usage is its own lines
// and then the flags, flags before, between or after the positional
// arguments, -h exiting 0 and a bad flag 2.
package cliflags

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// New is a command's flag set: its errors go to stderr, and its
// usage (-h, or a bad flag) prints the given lines, then the flags. The
// first line is "Usage: PROGRAM NAME …".
func New(name string, stderr io.Writer, usage ...string) *flag.FlagSet {
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

// Parse parses a command's arguments, flags before, between or after
// the positional ones. It returns the positional arguments and ok; when
// parsing ends the command, ok is false and exit is its status: 0 after
// -h (the usage is printed), 2 for a bad flag.
func Parse(fl *flag.FlagSet, args []string) (pos []string, exit int, ok bool) {
	pos, err := interspersed(fl, args)
	switch {
	case err == nil:
		return pos, 0, true
	case errors.Is(err, flag.ErrHelp):
		return nil, 0, false
	}
	return nil, 2, false
}

// interspersed parses flags that come before, between or after the
// positional arguments ("pling invoke TARGET CAP --input {}"), which the
// flag package alone stops at; "--" ends the flags.
func interspersed(fl *flag.FlagSet, args []string) ([]string, error) {
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
