package idchars

import "testing"

func TestOf(t *testing.T) {
	tests := []struct {
		name           string
		s              string
		minLen, maxLen int
		extra          string
		want           bool
	}{
		{"letters and digits", "aZ09", 1, 8, "", true},
		{"an extra character", "a_b-c", 1, 8, "_-", true},
		{"a character not named", "a.b", 1, 8, "_-", false},
		{"empty under a minimum of one", "", 1, 8, "", false},
		{"empty allowed", "", 0, 8, "", true},
		{"at the maximum", "abcd", 1, 4, "", true},
		{"past the maximum", "abcde", 1, 4, "", false},
		{"below the minimum", "abc", 4, 4, "", false},
		{"non-ASCII letter", "é", 1, 8, "", false},
		{"NUL", "a\x00", 1, 8, "", false},
		{"space", "a b", 1, 8, "_-", false},
		{"a byte just past the letters", "a{", 1, 8, "", false},
		{"a byte just before the digits", "a/", 1, 8, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.s, tt.minLen, tt.maxLen, tt.extra); got != tt.want {
				t.Errorf("Of(%q, %d, %d, %q) = %v, want %v", tt.s, tt.minLen, tt.maxLen, tt.extra, got, tt.want)
			}
		})
	}
}
