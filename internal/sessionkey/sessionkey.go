// Package sessionkey names a session the way package runtime does: the
// key a ReplayGuard is called with for a token, and the digest an
// approval's binding names its session by. Package runtime keys its
// sessions with FromSum; the module's server side (authority/follow)
// computes both from a token. A user of the runtime never computes them
// (a guard is handed the key), so they are not part of package runtime's
// API (docs/style.md "A small public API").
package sessionkey

import (
	"crypto/sha256"
	"encoding/hex"
)

// FromSum is the key of the session whose token has the SHA-256 digest
// sum: the first half of the digest, never the token.
func FromSum(sum *[sha256.Size]byte) string {
	return "s:" + hex.EncodeToString(sum[:16])
}

// Of returns the key of the session a token opens: what the runtime keys
// the session by and what a ReplayGuard is called with for it. It is a
// digest, never the token, so a guard that needs to know which token a
// key stands for (a shared guard in an authority) keeps its own map from
// the keys of the tokens it verified.
func Of(token string) string {
	sum := sha256.Sum256([]byte(token))
	return FromSum(&sum)
}

// Digest is the digest of the session a token opens, as an approval's
// binding names it (runtime.ApprovalRequest's Session): what a server
// compares an approval with the session token that came with it by. It
// is the runtime's canonical digest of the key ("sha256:" and the hex
// SHA-256 of its canonical JSON); the key's characters (s, :, hex
// digits) need no escaping, so its canonical JSON is the key in quotes.
// TestSessionKeyAgreesWithTheRuntime (runtime) checks the two agree.
func Digest(token string) string {
	sum := sha256.Sum256([]byte(`"` + Of(token) + `"`))
	return "sha256:" + hex.EncodeToString(sum[:])
}
