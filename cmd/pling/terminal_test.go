package main

import (
	"strings"
	"testing"
)

// TestTerminal: what pling check and describe print reaches the terminal
// with every character it would act on escaped, whatever way the text is
// cut into writes, and no more than maxTerminalBytes of it; writing the
// page's strings as they are fails it.
func TestTerminal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"plain lines", []string{"a\tb\n", "c\n"}, "a\tb\nc\n"},
		{"erase line", []string{"\x1b[2K\rpling check: no declaration mistakes\n"}, `\u001b[2K\rpling check: no declaration mistakes` + "\n"},
		{"OSC 52", []string{"\x1b]52;c;ZXZpbA==\a"}, `\u001b]52;c;ZXZpbA==\u0007`},
		{"OSC 8", []string{"\x1b]8;;http://x/\x1b\\y"}, `\u001b]8;;http://x/\u001b\y`},
		{"C1 CSI", []string{"\u009b31m"}, `\u009b31m`},
		{"bidi and tags", []string{"\u202e\U000E0041\u200b"}, `\u202e\udb40\udc41\u200b`},
		{"a rune cut across writes", []string{"caf\xc3", "\xa9 \xe2\x80", "\xae"}, `café \u202e`},
		{"JSON stays JSON", []string{`{"t": "a` + "\u202e" + `"}`}, `{"t": "a\u202e"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			w := newTerminal(&b)
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			w.Flush()
			if b.String() != tc.want {
				t.Errorf("printed %q, want %q", b.String(), tc.want)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		var b strings.Builder
		w := newTerminal(&b)
		line := strings.Repeat("x", 1<<20)
		for range 10 {
			w.Write([]byte(line))
		}
		if b.Len() > maxTerminalBytes+200 || !strings.Contains(b.String(), "pling cut its output here") {
			t.Errorf("printed %d bytes of 10 MiB (bound %d), ending %q", b.Len(), maxTerminalBytes, b.String()[b.Len()-80:])
		}
	})
}
