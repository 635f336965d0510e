// Package urlsafe is the check the authority and its followers share for
// the ids they put in URL paths (session ids, as randomID makes them).
package urlsafe

// ID reports whether s is 1–128 chars of [A-Za-z0-9_-], what a path
// segment carries as it is.
func ID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
