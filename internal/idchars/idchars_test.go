package idchars

import (
	"strings"
	"testing"
)

// TestOfAlphabet: every byte value, after a valid first byte, is taken
// exactly when it is an ASCII letter or digit or one of extra.
func TestOfAlphabet(t *testing.T) {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for _, extra := range []string{"", "_-", "._~:-"} {
		for c := range 256 {
			s := "a" + string([]byte{byte(c)})
			want := strings.IndexByte(alnum+extra, byte(c)) >= 0
			if got := Of(s, 1, 8, extra); got != want {
				t.Errorf("Of(%q, 1, 8, %q) = %v, want %v", s, extra, got, want)
			}
		}
	}
}

// TestOfLength: the bounds are inclusive.
func TestOfLength(t *testing.T) {
	for _, tt := range []struct {
		name, s        string
		minLen, maxLen int
		want           bool
	}{
		{"empty under a minimum of one", "", 1, 8, false},
		{"empty allowed", "", 0, Unbounded, true},
		{"at the maximum", "abcd", 1, 4, true},
		{"past the maximum", "abcde", 1, 4, false},
		{"below the minimum", "abc", 4, 4, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.s, tt.minLen, tt.maxLen, ""); got != tt.want {
				t.Errorf("Of(%q, %d, %d) = %v, want %v", tt.s, tt.minLen, tt.maxLen, got, tt.want)
			}
		})
	}
}
