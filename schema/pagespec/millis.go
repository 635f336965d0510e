package pagespec

import (
	"math"
	"time"
)

// Millis is one of the wire's …Ms numbers (a page's configuration, a
// conformance case's) as a time.Duration, saturating rather than
// overflowing on a number too large for one: the number is the page's.
func Millis(ms int64) time.Duration {
	const most = math.MaxInt64 / int64(time.Millisecond)
	switch {
	case ms > most:
		return math.MaxInt64
	case ms < -most:
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}
