// Package cmdtable is the command table of the repository's
// multi-command binaries (pling, pling-bench): each command's file adds
// itself in init, so a new command is a new file, and the binary looks a
// command up and lists them from the one table.
package cmdtable

import (
	"context"
	"fmt"
	"io"
	"sort"
)

// Func runs one command with its arguments (the command's name cut) and
// returns the process's exit status.
type Func func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Command is one command: its name, its one-line usage and what runs it.
type Command struct {
	Name, Usage string
	Run         Func
}

// Table holds the commands by name.
type Table map[string]Command

// Add adds a command.
func (t Table) Add(name, usage string, run Func) {
	t[name] = Command{Name: name, Usage: usage, Run: run}
}

// Sorted returns the commands by name.
func (t Table) Sorted() []Command {
	out := make([]Command, 0, len(t))
	for _, c := range t {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WriteList writes "Commands:" and a line per command, by name, its name
// padded to width.
func (t Table) WriteList(w io.Writer, width int) {
	fmt.Fprintln(w, "Commands:")
	for _, c := range t.Sorted() {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.Name, c.Usage)
	}
}
