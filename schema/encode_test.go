package schema

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEncodeScalars checks that the values Encode writes without the
// encoder (nil, booleans, strings) come out byte for byte as the encoder
// writes them.
func TestEncodeScalars(t *testing.T) {
	for _, v := range []any{nil, true, false, "", "plain", "a \"quoted\" \\ line\n\t\r\b\f", "<&>", "\x00\x1f\x7f",
		"\u2028\u2029", "x\xffy", "é 😀", "\xed\xa0\x80"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		got, err := Encode(v)
		if err != nil {
			t.Fatalf("Encode(%q): %v", v, err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("Encode(%q) (-encoder +Encode):\n%s", v, diff)
		}
	}
}
