package errors

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/jsontrees"
)

// TestEncodeAsMarshal: the size cap measures details as json.Marshal, and
// so (*Error).MarshalJSON, writes them, HTML escapes included, on the
// shared table of value trees and on what Redact keeps.
func TestEncodeAsMarshal(t *testing.T) {
	values := map[string]any{
		"html":        map[string]any{"<a>": "x & y <b>", "k": []any{">", nil, true, json.Number("1.50")}},
		"redacted":    Redact(map[string]any{"token": "t", "n": json.Number("7"), "note": "a\u2028b\xff"}),
		"unencodable": json.Number("1x"),
	}
	for _, tt := range jsontrees.Trees {
		values[tt.Name] = tt.Value
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(v)
			if err != nil {
				want = nil
			}
			if diff := cmp.Diff(string(want), string(encode(v))); diff != "" {
				t.Errorf("encode (-json.Marshal +got):\n%s", diff)
			}
		})
	}
}
