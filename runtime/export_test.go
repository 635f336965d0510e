package runtime

// What the tests (runtime's own and its examples, package runtime_test)
// need that is not public API: RATIONALE.md, "What stays exported for
// tests?".

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Runs returns, per base action id, how many invokes reached the run stage.
func (rt *Runtime) Runs() map[string]int { return rt.runCounts() }

// HandleTo is Handle writing the response's pieces to w instead of joining
// them, for the describe-cache benchmark, which measures the runtime's work
// without a response-sized allocation.
func (rt *Runtime) HandleTo(ctx context.Context, raw []byte, w io.Writer) error {
	for _, p := range rt.handleParts(ctx, raw) {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// MintToken signs claims into a token, for the tests; it refuses claims the
// verifier would refuse for their shape (not for their times). A delegation
// service mints its own tokens (docs/protocol.md gives the format).
func MintToken(key ed25519.PrivateKey, kid string, c Claims) (string, error) {
	if !validKid(kid) {
		return "", fmt.Errorf("pling: bad key id %q", kid)
	}
	if len(key) != ed25519.PrivateKeySize {
		return "", errors.New("pling: bad signing key")
	}
	if c.Subject == "" || c.Audience == "" || c.ExpiresAtMs <= 0 || c.ID == "" || len(c.Scope) == 0 {
		return "", errors.New("pling: claims need sub, aud, exp, jti and scope")
	}
	for _, p := range c.Scope {
		if !validPattern(p) {
			return "", fmt.Errorf("pling: bad scope pattern %q", p)
		}
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	signed := tokenPrefix + "." + kid + "." + b64.EncodeToString(payload)
	tok := signed + "." + b64.EncodeToString(ed25519.Sign(key, []byte(signed)))
	if len(tok) > MaxTokenLen {
		return "", errors.New("pling: token too long")
	}
	return tok, nil
}

// ClockSkew is the allowance for a session's not-before time, for the
// token tests.
const ClockSkew = clockSkew
