package pagespec

import (
	"math"
	"testing"
	"time"
)

// A page's …Ms numbers become the runtime's durations without overflow.
func TestMillis(t *testing.T) {
	tests := []struct {
		name string
		ms   int64
		want time.Duration
	}{
		{"zero", 0, 0},
		{"a minute", 60_000, time.Minute},
		{"negative", -5, -5 * time.Millisecond},
		{"too large", math.MaxInt64, math.MaxInt64},
		{"too small", math.MinInt64, math.MinInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Millis(tc.ms); got != tc.want {
				t.Errorf("Millis(%d) = %v, want %v", tc.ms, got, tc.want)
			}
		})
	}
}
