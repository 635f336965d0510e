package main

import (
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/pling-go/pling/internal/pagetext"
)

// maxTerminalBytes bounds what pling check and pling describe print on
// one stream.
const maxTerminalBytes = 4 << 20

// terminal is a writer for a stream a person may read in a terminal,
// which carries what a page wrote: every character a terminal acts on
// or a reader cannot see is escaped (pagetext.EscapeText: ESC and so
// CSI, OSC 52 clipboard writes and OSC 8 links, the other C0 and C1
// controls, bidi overrides and isolates, zero-width and tag characters),
// a newline and a tab kept; and after maxTerminalBytes it prints one line
// saying it cut the rest. JSON stays JSON: the escapes it writes are
// JSON's, and only strings hold such characters.
type terminal struct {
	w       io.Writer
	partial []byte // an incomplete UTF-8 sequence at the end of the last write
	written int
	cut     bool
}

func newTerminal(w io.Writer) *terminal { return &terminal{w: w} }

func (t *terminal) Write(p []byte) (int, error) {
	if t.cut {
		return len(p), nil
	}
	buf := append(t.partial, p...)
	end := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				end = i
			}
			break
		}
	}
	t.partial = append([]byte(nil), buf[end:]...)
	out := pagetext.EscapeText(string(buf[:end]))
	if t.written+len(out) > maxTerminalBytes {
		out = pagetext.CutBytes(out, maxTerminalBytes-t.written)
		out += fmt.Sprintf("\n… (pling cut its output here: over %d bytes)\n", maxTerminalBytes)
		t.cut = true
	}
	t.written += len(out)
	if _, err := io.WriteString(t.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is left of an incomplete UTF-8 sequence, escaped.
func (t *terminal) Flush() {
	if len(t.partial) > 0 && !t.cut {
		_, _ = io.WriteString(t.w, pagetext.EscapeText(string(t.partial)))
	}
	t.partial = nil
}
