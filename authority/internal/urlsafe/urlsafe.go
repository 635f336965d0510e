// Package urlsafe is the check the authority and its followers share for
// the ids they put in URL paths (session ids, as randomID makes them).
package urlsafe

import "github.com/pling-go/pling/internal/idchars"

// ID reports whether s is 1–128 chars of [A-Za-z0-9_-], what a path
// segment carries as it is.
func ID(s string) bool {
	return idchars.Of(s, 1, 128, "_-")
}
