package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNavLinks: links are read from the outline's quoted lines, so a
// link text that writes " -> " cannot choose the target, and a
// javascript: or fragment target is left out.
func TestNavLinks(t *testing.T) {
	outline := `landmark: navigation "Main"
link: "Tickets" -> "/tickets/"
link: "x\" -> \"/evil" -> "/real"
link: "Run" -> " JavaScript:alert(1)"
link: "Top" -> "#top"
link: "Tickets again" -> "/tickets/"
button: "Save"
`
	want := []string{`"Tickets" -> "/tickets/"`, `"x\" -> \"/evil" -> "/real"`}
	if diff := cmp.Diff(want, navLinks(outline)); diff != "" {
		t.Errorf("navLinks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`navigation "Main"`}, landmarks(outline)); diff != "" {
		t.Errorf("landmarks (-want +got):\n%s", diff)
	}
}

// TestBoundStructured: a result's structured content is escaped and
// bounded, the value giving way first, with a note that names the bound.
func TestBoundStructured(t *testing.T) {
	long := strings.Repeat("a", 5000)
	many := make([]any, 0, 3000)
	for range 3000 {
		many = append(many, "item")
	}
	for _, tc := range []struct {
		name     string
		in       map[string]any
		check    func(t *testing.T, out map[string]any, raw string)
		wantNote bool
	}{
		{"small and plain stays as it is", map[string]any{"value": "ok", "changed": map[string]any{"n": 1}}, func(t *testing.T, out map[string]any, raw string) {
			if raw != `{"changed":{"n":1},"value":"ok"}` {
				t.Errorf("got %s", raw)
			}
		}, false},
		{"hidden characters escaped, keys too", map[string]any{"value": map[string]any{"k\u202e": "v\u200b\x1b"}}, func(t *testing.T, out map[string]any, raw string) {
			if raw != `{"value":{"k\\u202e":"v\\u200b\\u001b"}}` {
				t.Errorf("got %s", raw)
			}
		}, false},
		{"a long string is cut", map[string]any{"value": long}, func(t *testing.T, out map[string]any, raw string) {
			if v, _ := out["value"].(string); len(v) != MaxStructuredString+len("…") {
				t.Errorf("value of %d bytes", len(v))
			}
		}, true},
		{"a long list gives way, the evidence stays", map[string]any{"value": many, "evidence": map[string]any{"record": "r1"}}, func(t *testing.T, out map[string]any, raw string) {
			if len(raw) > MaxStructuredBytes || out["evidence"] == nil || len(out["value"].([]any)) >= 3000 {
				t.Errorf("%d bytes: %.200s", len(raw), raw)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := boundStructured(tc.in).(map[string]any)
			note, noted := out["cut"].(string)
			if noted != tc.wantNote || (noted && !strings.Contains(note, "each string at most 2000 characters, the whole at most 16384 bytes")) {
				t.Errorf("note %q, want one: %v", note, tc.wantNote)
			}
			delete(out, "cut")
			raw, _ := json.Marshal(out)
			tc.check(t, out, string(raw))
		})
	}
}
