package runtime

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	perr "github.com/pling-go/pling/errors"
)

// ApprovalPrefix starts an approval the authority signed (pa1.<kid>.
// <payload>.<signature>), so an approval is never read as a session token
// (pl1) nor a session token as an approval: the signature covers the
// prefix.
const ApprovalPrefix = "pa1"

// ApprovalClaims are what an authority's approval says: a person approved
// the SurfaceApprovalBinding whose digest is Binding, for the page at
// Audience, until ExpiresAtMs; ID identifies it (once only).
type ApprovalClaims struct {
	Binding     string `json:"binding"`
	Audience    string `json:"aud"`
	IssuedAtMs  int64  `json:"iat,omitempty"`
	ExpiresAtMs int64  `json:"exp"`
	ID          string `json:"jti"`
	// RequestID, Session and Summary are the binding's fields a site's
	// server cannot know by itself (ExpiresAtMs is the binding's expiry
	// too): with them and what it is about to do — capability, input,
	// record — the server computes the binding again and accepts the
	// approval only when it is the one signed (follow.Follower.CheckCall).
	// Only Binding is trusted: the page compares it with its own.
	RequestID string `json:"rid,omitempty"`
	Session   string `json:"sess,omitempty"`
	Summary   string `json:"sum,omitempty"`
}

// VerifyApproval checks an approval the authority signed: signed by one
// of the verifier's keys, for its audience, for exactly binding, not
// expired at nowMs. It returns its claims; the caller accepts each id
// once (ApprovalGuard). Any other approval is PERMISSION_DENIED.
func (v *TokenVerifier) VerifyApproval(approval, binding string, nowMs int64) (ApprovalClaims, error) {
	deny := func(msg string) (ApprovalClaims, error) {
		return ApprovalClaims{}, perr.New(perr.PermissionDenied, msg, nil)
	}
	parts := strings.Split(approval, ".")
	if len(parts) != 4 || parts[0] != ApprovalPrefix || !validKid(parts[1]) || !tokenAlphabet(approval) {
		return deny("The approval is malformed")
	}
	key, ok := v.keys[parts[1]]
	if !ok {
		return deny("The approval was signed by an unknown key")
	}
	sig, err := b64.DecodeString(parts[3])
	if err != nil || len(sig) != 64 {
		return deny("The approval is malformed")
	}
	if !ed25519Verify(key, []byte(approval[:len(approval)-len(parts[3])-1]), sig) {
		return deny("The approval's signature does not verify")
	}
	payload, err := b64.DecodeString(parts[2])
	if err != nil {
		return deny("The approval is malformed")
	}
	var c ApprovalClaims
	d := json.NewDecoder(bytes.NewReader(payload))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil || d.More() {
		return deny("The approval's claims are malformed")
	}
	switch {
	case c.Audience != v.audience:
		return deny("The approval is for another origin")
	case c.Binding != binding:
		return deny("The approval is for another request or input")
	case c.ExpiresAtMs <= nowMs:
		return deny("The approval expired")
	case c.ID == "" || len(c.ID) > 128:
		return deny("The approval has no id")
	}
	return c, nil
}

// ApprovalGuard accepts each approval id once, so a replayed approval
// runs nothing. Ids are kept until their approval would expire.
type ApprovalGuard struct {
	mu   sync.Mutex
	seen map[string]int64 // id → expiry (ms)
}

// Accept reports whether id is new; it remembers it until expiresAtMs.
func (g *ApprovalGuard) Accept(id string, expiresAtMs, nowMs int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[string]int64{}
	}
	for k, exp := range g.seen {
		if exp <= nowMs {
			delete(g.seen, k)
		}
	}
	if _, ok := g.seen[id]; ok {
		return false
	}
	g.seen[id] = expiresAtMs
	return true
}
