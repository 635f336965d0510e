package cdp

import (
	"context"
	"strings"
	"testing"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/google/go-cmp/cmp"
)

// TestThrownText: an exception the page threw reads as its message and
// first place, bounded, without the rest of the stack or the URL's query.
func TestThrownText(t *testing.T) {
	frame := func(url string, line int64) *cdpruntime.StackTrace {
		return &cdpruntime.StackTrace{CallFrames: []*cdpruntime.CallFrame{{URL: url, LineNumber: line}, {URL: "http://x/other.js", LineNumber: 99}}}
	}
	long := strings.Repeat("x", 500)
	for _, tc := range []struct {
		name string
		d    cdpruntime.ExceptionDetails
		want string
	}{
		{"inline script", cdpruntime.ExceptionDetails{Text: "Uncaught", URL: "http://h/p.html", LineNumber: 2,
			Exception:  &cdpruntime.RemoteObject{Type: "object", Description: "ReferenceError: boardz is not defined\n    at http://h/p.html:3:50"},
			StackTrace: frame("http://h/p.html?token=secret#x", 2)},
			"ReferenceError: boardz is not defined (at http://h/p.html:3)"},
		{"unhandled rejection", cdpruntime.ExceptionDetails{Text: "Uncaught (in promise)",
			Exception: &cdpruntime.RemoteObject{Type: "object", Description: "Error: no board\n    at load (http://h/app.js:10:5)"}, StackTrace: frame("http://h/app.js", 9)},
			"unhandled rejection: Error: no board (at http://h/app.js:10)"},
		{"thrown string", cdpruntime.ExceptionDetails{Text: "Uncaught", URL: "http://h/p.html", LineNumber: 0,
			Exception: &cdpruntime.RemoteObject{Type: "string", Value: []byte(`"oops"`)}},
			`"oops" (at http://h/p.html:1)`},
		{"no object, no place", cdpruntime.ExceptionDetails{Text: "Uncaught SyntaxError: Unexpected token '}'"},
			"SyntaxError: Unexpected token '}'"},
		{"bounded", cdpruntime.ExceptionDetails{Text: "Uncaught", Exception: &cdpruntime.RemoteObject{Description: "Error: " + long}, URL: "http://h/" + long},
			"Error: " + long[:192] + "… (at http://h/" + long[:190] + "…:1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ThrownText(&tc.d)); diff != "" {
				t.Errorf("ThrownText (-want +got):\n%s", diff)
			}
		})
	}
}

// TestThrownKeepsFiveAndRevokes: a document's record keeps five lines,
// counts them all, forgets a rejection handled later, and starts again at
// the next navigation.
func TestThrownKeepsFiveAndRevokes(t *testing.T) {
	p := &Page{tab: context.Background()}
	for i := range 7 {
		p.noteThrown("", &cdpruntime.ExceptionDetails{ExceptionID: int64(i), Text: "Uncaught " + string(rune('a'+i))})
	}
	p.revokeThrown("", 1)
	lines, total := p.Thrown()
	if diff := cmp.Diff([]string{"a", "c", "d", "e"}, lines); diff != "" || total != 6 {
		t.Errorf("Thrown() total %d, want 6; lines (-want +got):\n%s", total, diff)
	}
	p.forgetThrown("")
	if lines, total := p.Thrown(); lines != nil || total != 0 {
		t.Errorf("after a navigation Thrown() = %q, %d; want none", lines, total)
	}
}
