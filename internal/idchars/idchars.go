// Package idchars is the one check of how an id, key, code or token is
// spelled, for the runtime, the authority and the page's replay store: a
// length bound and an alphabet of ASCII letters, digits and a few more
// characters that each caller names.
package idchars

import "math"

// Of reports whether s is minLen to maxLen bytes long and each byte is an
// ASCII letter, an ASCII digit or one of extra.
func Of(s string, minLen, maxLen int, extra string) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || in(extra, c)) {
			return false
		}
	}
	return true
}

// in reports whether c is one of extra's few bytes: a loop, not
// strings.IndexByte, whose call costs more than the search at this size
// (a describe checks every row's id, 10,000 on a large page).
func in(extra string, c byte) bool {
	for i := 0; i < len(extra); i++ {
		if extra[i] == c {
			return true
		}
	}
	return false
}

// Unbounded is the maxLen of an alphabet check whose length another rule
// bounds.
const Unbounded = math.MaxInt
