// Package sessionkey names a session the way package runtime does, for
// the module's own server side (authority/follow): the key a ReplayGuard
// is called with for a token, and the digest an approval's binding names
// its session by. A user of the runtime never computes them (a guard is
// handed the key), so they are not part of package runtime's API
// (docs/style.md "A small public API").
//
// Package runtime registers its functions here from its init, as it does
// in internal/modeltool: the digests are its own (its canonical JSON),
// and this package cannot import it.
package sessionkey

var keyOf, digest func(token string) string

// Register is called once, by package runtime's init.
func Register(keyOfToken, digestOfToken func(token string) string) {
	keyOf, digest = keyOfToken, digestOfToken
}

// Of returns the key of the session a token opens: what the runtime keys
// the session by and what a ReplayGuard is called with for it. It is a
// digest, never the token, so a guard that needs to know which token a
// key stands for (a shared guard in an authority) keeps its own map from
// the keys of the tokens it verified.
func Of(token string) string { return keyOf(token) }

// Digest is the digest of the session a token opens, as an approval's
// binding names it (runtime.ApprovalRequest's Session): what a server
// compares an approval with the session token that came with it by.
func Digest(token string) string { return digest(token) }
