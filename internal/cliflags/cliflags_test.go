package cliflags

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// TestParseInterspersed: flags may come before, between or after the
// positional arguments; "--" ends them.
func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args    []string
		wantPos []string
		wantIn  string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, ""},
		{[]string{"--input", "{}", "a", "b"}, []string{"a", "b"}, "{}"},
		{[]string{"a", "--input", "{}", "b"}, []string{"a", "b"}, "{}"},
		{[]string{"a", "b", "--input={}"}, []string{"a", "b"}, "{}"},
		{[]string{"a", "--", "--input", "b"}, []string{"a", "--input", "b"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			fl := newTestFlags()
			in := fl.String("input", "", "")
			pos, _, ok := Parse(fl, tt.args)
			if !ok {
				t.Fatal("Parse failed")
			}
			if strings.Join(pos, "|") != strings.Join(tt.wantPos, "|") || *in != tt.wantIn {
				t.Errorf("pos %q, input %q; want %q, %q", pos, *in, tt.wantPos, tt.wantIn)
			}
		})
	}
}

func newTestFlags() *flag.FlagSet {
	fl := flag.NewFlagSet("test", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	return fl
}
