package jsonwrite

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pling-go/pling/internal/testing/sortcheck"
)

// TestSortUTF16AsSortFunc: sortUTF16 puts keys in exactly the order
// slices.SortFunc with compareUTF16 does, ties included (distinct invalid
// UTF-8 that decodes alike, "\xff" and "\xfe", come out in the same order).
func TestSortUTF16AsSortFunc(t *testing.T) {
	parts := []string{"a", "b", "é", "\uffff", "\ue000", "\U0001F600", "\U00010000", "\xff", "\xfe", "", "1", "10", "z"}
	sortcheck.AsSortFunc(t, 3, func(r *rand.Rand, n, round int) []string {
		keys := make([]string, n)
		for i := range keys {
			k := ""
			for range 1 + r.IntN(3) {
				k += parts[r.IntN(len(parts))]
			}
			if round%2 == 1 {
				k += fmt.Sprint(r.IntN(n + 1))
			}
			keys[i] = k
		}
		return keys
	}, compareUTF16, sortUTF16)
}

func TestCompareUTF16(t *testing.T) {
	tests := []struct {
		a, b string
		want int // its sign
	}{
		{"", "", 0},
		{"a", "", 1},
		{"a", "b", -1},
		{"ab", "a", 1},
		{"\U0001F600", "\uFB33", -1}, // D83D < FB33; UTF-8 says the opposite
		{"\uE000", "\U00010000", 1},
		{"\U00010000", "\U0010FFFF", -1},
		{"\U0001F600", "\U0001F601", -1},
		{"x\U0001F600", "x\uFFFF", -1},
		{"\uD7FF", "\U00010000", -1},
	}
	for _, tt := range tests {
		got := compareUTF16(tt.a, tt.b)
		if sign(got) != tt.want || sign(compareUTF16(tt.b, tt.a)) != -tt.want {
			t.Errorf("compareUTF16(%q, %q) = %d, want sign %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
