package jsstrip

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/wanterr"
)

func TestStrip(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{name: "comment lines and blank lines go", in: "// a\nvar x = 1;\n\n   // b\n\t\nx++;\n", want: "var x = 1;\nx++;\n"},
		{name: "indentation goes", in: "function f() {\n    return 1;\n  }\n", want: "function f() {\nreturn 1;\n}\n"},
		{name: "a trailing comment stays", in: "var x = 1; // one\n", want: "var x = 1; // one\n"},
		{name: "// in a string stays", in: `var u = "http://x"; // c` + "\n" + `  "//not a comment" + u;` + "\n", want: `var u = "http://x"; // c` + "\n" + `"//not a comment" + u;` + "\n"},
		{name: "a regular expression stays", in: "  s = s.replace(/\\/\\/+/g, \"/\");\n  b = /[^/]*$/;\n", want: "s = s.replace(/\\/\\/+/g, \"/\");\nb = /[^/]*$/;\n"},
		{name: "a block comment of whole lines goes", in: "/* head\n * more\n */\nvar x;\n  /* one line */\nx;\n", want: "var x;\nx;\n"},
		{name: "a line in a block comment that looks like code goes", in: "/*\nvar gone = `x`;\n*/\nok();\n", want: "ok();\n"},
		{name: "no final newline", in: "a();\n// c", want: "a();\n"},
		{name: "a template literal is refused", in: "var s = `a\n// b\n`;\n", err: "line 1: a template literal"},
		{name: "a continued string is refused", in: "var s = \"a\\\n// b\";\n", err: "line 1: a string continued"},
		{name: "a block comment opened after code is refused", in: "f(); /* a\n// b */\n", err: "line 1: a block comment may continue"},
		{name: "code after a block comment is refused", in: "/* a */ f();\n", err: "line 1: code after a block comment"},
		{name: "code after a block comment's end is refused", in: "/* a\n*/ f();\n", err: "line 2: code after"},
		{name: "an unclosed block comment is refused", in: "/* a\nf();\n", err: "not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Strip(tc.in)
			if wanterr.Check(t, "Strip", err, tc.err) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Strip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStripShim: the scripts make wasm strips strip, and only lose lines
// that are comments or blank: every kept line is a source line, trimmed,
// in order.
func TestStripShim(t *testing.T) {
	for _, f := range []string{"pling.js", "ui.js", "webmcp.js"} {
		t.Run(f, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "js-shim", f))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Strip(string(b))
			if err != nil {
				t.Fatal(err)
			}
			src := strings.Split(string(b), "\n")
			i := 0
			for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				for i < len(src) && strings.TrimSpace(src[i]) != l {
					if s := strings.TrimSpace(src[i]); s != "" && !strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "/*") && !strings.HasPrefix(s, "*") {
						t.Fatalf("source line %d %q was dropped", i+1, s)
					}
					i++
				}
				if i == len(src) {
					t.Fatalf("kept line %q is not a source line in order", l)
				}
				i++
			}
			t.Logf("%s: %d B → %d B", f, len(b), len(got))
		})
	}
}
