package jsonvalue

import (
	"bytes"
	"encoding/json"
	"testing"
)

// quotedByEncodingJSON is what AppendQuoted must equal.
func quotedByEncodingJSON(t testing.TB, s string, html bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestAppendQuoted(t *testing.T) {
	cases := []struct{ name, in string }{
		{"empty", ""},
		{"plain", "cart.add"},
		{"quote and backslash", `a"b\c`},
		{"short escapes", "\b\f\n\r\t"},
		{"other controls", "\x00\x01\x1f\x7f"},
		{"html", "<a href='x'>&amp;</a>"},
		{"line separators", "a\u2028b\u2029c"},
		{"invalid utf-8", "a\xffb\xc3"},
		{"surrogate bytes", "\xed\xa0\x80"},
		{"non-ascii", "订单 ü 😀"},
	}
	for _, tc := range cases {
		for _, html := range []bool{true, false} {
			if got, want := string(AppendQuoted(nil, tc.in, html)), quotedByEncodingJSON(t, tc.in, html); got != want {
				t.Errorf("%s (html %v): %s, encoding/json writes %s", tc.name, html, got, want)
			}
		}
	}
	// Every single byte, alone and between plain text.
	for b := 0; b < 256; b++ {
		for _, s := range []string{string([]byte{byte(b)}), "x" + string([]byte{byte(b)}) + "y"} {
			for _, html := range []bool{true, false} {
				if got, want := string(AppendQuoted(nil, s, html)), quotedByEncodingJSON(t, s, html); got != want {
					t.Fatalf("byte %#x (html %v): %s, encoding/json writes %s", b, html, got, want)
				}
			}
		}
	}
}

func FuzzAppendQuoted(f *testing.F) {
	f.Add("a\"b\\c\n<&>\u2028\xff", true)
	f.Fuzz(func(t *testing.T, s string, html bool) {
		if got, want := string(AppendQuoted([]byte("x"), s, html)), "x"+quotedByEncodingJSON(t, s, html); got != want {
			t.Fatalf("%q (html %v): %s, encoding/json writes %s", s, html, got, want)
		}
	})
}
