package runtime

import (
	"testing"

	"github.com/pling-go/pling/internal/sessionkey"
	"github.com/pling-go/pling/runtime/internal/canon"
)

// TestSessionKeyAgreesWithTheRuntime: internal/sessionkey, which
// authority/follow names sessions with, gives the key the gate keys a
// session by and the digest an approval's binding names it by (the
// runtime's canonical digest of the key), for tokens of every shape the
// gate accepts a string of.
func TestSessionKeyAgreesWithTheRuntime(t *testing.T) {
	for _, tok := range []string{"pl1.k.payload.sig", "x", "a token with spaces", "ünïcödé\u2028", string(make([]byte, MaxTokenLen))} {
		key := sessionKeyOf(tok)
		if got := sessionkey.Of(tok); got != key {
			t.Errorf("sessionkey.Of(%.20q) = %s, the gate's key %s", tok, got, key)
		}
		want, err := canon.Digest(key)
		if err != nil {
			t.Fatal(err)
		}
		if got := sessionkey.Digest(tok); got != want {
			t.Errorf("sessionkey.Digest(%.20q) = %s, the runtime's digest of the key %s", tok, got, want)
		}
	}
}
