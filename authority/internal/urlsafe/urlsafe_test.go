package urlsafe

import (
	"strings"
	"testing"
)

func TestID(t *testing.T) {
	for _, tc := range []struct {
		name, id string
		want     bool
	}{
		{"random id", "s_AbC-09xyz", true},
		{"empty", "", false},
		{"128 chars", strings.Repeat("a", 128), true},
		{"129 chars", strings.Repeat("a", 129), false},
		{"slash", "a/b", false},
		{"dot", "a.b", false},
		{"percent", "a%2F", false},
		{"non-ASCII", "é", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ID(tc.id); got != tc.want {
				t.Errorf("ID(%q) = %v, want %v", tc.id, got, tc.want)
			}
		})
	}
}
