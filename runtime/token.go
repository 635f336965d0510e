package runtime

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/idchars"
	"github.com/pling-go/pling/internal/sessionkey"
	"github.com/pling-go/pling/schema"
)

// The built-in delegation token (RATIONALE.md "Why this token format?"):
//
//	pl1.<kid>.<payload>.<signature>
//
// kid names the signing key (1–64 chars of [A-Za-z0-9_-]); payload is the
// unpadded base64url of a JSON object of Claims; signature is the unpadded
// base64url Ed25519 signature of the ASCII text "pl1.<kid>.<payload>".
// Nothing in the payload is read before the signature verifies.

const tokenPrefix = "pl1"

// MaxTokenLen bounds a token's length.
const MaxTokenLen = 4096

// Claims are what a delegation token says.
type Claims struct {
	// Subject is who the agent acts for.
	Subject string `json:"sub"`
	// Audience is the page origin the token is bound to.
	Audience string `json:"aud"`
	// Scope is the capability patterns the session may use.
	Scope []string `json:"scope"`
	// IssuedAtMs, NotBeforeMs and ExpiresAtMs are Unix milliseconds.
	IssuedAtMs  int64 `json:"iat,omitempty"`
	NotBeforeMs int64 `json:"nbf,omitempty"`
	ExpiresAtMs int64 `json:"exp"`
	// ID identifies the token for revocation.
	ID string `json:"jti"`
	// Agent is the agent's name for itself, as the person saw it on the
	// consent screen; an approval dialog says which agent is asking.
	Agent string `json:"agent,omitempty"`
}

// RevocationChecker reports whether a token id was revoked. An error is a
// failure of the checker: the request is refused (INTERNAL_ERROR), never
// let through.
type RevocationChecker interface {
	Revoked(ctx context.Context, tokenID, subject string) (bool, error)
}

// RevocationFunc adapts a function to RevocationChecker.
type RevocationFunc func(ctx context.Context, tokenID, subject string) (bool, error)

// Revoked implements RevocationChecker.
func (f RevocationFunc) Revoked(ctx context.Context, id, subject string) (bool, error) {
	return f(ctx, id, subject)
}

// TokenVerifier verifies delegation tokens: signature by a known key,
// audience equal to the page origin, scope patterns well formed,
// revocation, expiry, and not-before with clockSkew of allowance.
//
// What cannot change for a given token — its signature, key, shape and
// audience — is checked once: the claims of a token that verified are kept
// in a small bounded cache keyed by the SHA-256 of the whole token, so a
// session's every request does not pay an Ed25519 verification. What can
// change — revocation, expiry, not-before — is checked on every call, hit
// or miss.
type TokenVerifier struct {
	keys     map[string]ed25519.PublicKey
	audience string
	revoked  RevocationChecker
	cache    verifiedCache
}

// verifiedCacheSize bounds the tokens a TokenVerifier remembers as
// verified.
const verifiedCacheSize = 1024

// ed25519Verify is the signature check; a variable so that tests can count
// the verifications the cache saves.
var ed25519Verify = ed25519.Verify

// verifiedCache maps the SHA-256 of a token to its verified claims and the
// gate's view of its session, built once. Entries are never modified once
// stored. Memory is bounded: at verifiedCacheSize entries, expired tokens
// are dropped, then arbitrary ones (a dropped token is verified again on
// its next use: the cache only ever saves work, it never decides).
type verifiedCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]*verified
}

// verified is one cached token: its claims, and the *gateSession the gate
// hands to the pipeline (read-only there; the session key is the digest's
// first half, the same for every verifier).
type verified struct {
	claims *Claims
	sess   *gateSession
}

func (c *verifiedCache) get(k [sha256.Size]byte) *verified {
	c.mu.Lock()
	e := c.m[k]
	c.mu.Unlock()
	return e
}

func (c *verifiedCache) put(k [sha256.Size]byte, e *verified, nowMs int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[[sha256.Size]byte]*verified)
	}
	if len(c.m) >= verifiedCacheSize {
		for k, e := range c.m {
			if nowMs >= e.claims.ExpiresAtMs {
				delete(c.m, k)
			}
		}
		// Still full of live tokens: drop a quarter at once (amortized).
		for k := range c.m {
			if len(c.m) < verifiedCacheSize*3/4 {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[k] = e
}

// size is the number of tokens held (tests).
func (c *verifiedCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// NewTokenVerifier returns a verifier for tokens signed by keys (by kid) and
// bound to audience (the page origin, e.g. "https://shop.example"). revoked
// may be nil.
func NewTokenVerifier(keys map[string]ed25519.PublicKey, audience string, revoked RevocationChecker) (*TokenVerifier, error) {
	if audience == "" {
		return nil, errors.New("pling: a token verifier needs the page origin as its audience")
	}
	ks := make(map[string]ed25519.PublicKey, len(keys))
	for kid, k := range keys {
		if !validKid(kid) || len(k) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("pling: bad verification key %q", kid)
		}
		ks[kid] = append(ed25519.PublicKey(nil), k...)
	}
	if len(ks) == 0 {
		return nil, errors.New("pling: a token verifier needs at least one key")
	}
	return &TokenVerifier{keys: ks, audience: audience, revoked: revoked}, nil
}

// tokenAlphabet reports whether s has only the characters of a token:
// base64url and '.'. It makes a token's spelling canonical.
func tokenAlphabet(s string) bool {
	return idchars.Of(s, 0, idchars.Unbounded, "_-.")
}

func validKid(kid string) bool {
	return idchars.Of(kid, 1, 64, "_-")
}

var b64 = base64.RawURLEncoding.Strict()

func invalid(msg string) error { return perr.New(perr.SessionInvalid, msg, nil) }

// Verify implements SessionVerifier.
func (v *TokenVerifier) Verify(ctx context.Context, token string, nowMs int64) (schema.SurfaceSession, error) {
	e, err := v.verify(ctx, token, tokenDigest(token), nowMs)
	if err != nil {
		return schema.SurfaceSession{}, err
	}
	ss := e.sess.SurfaceSession
	ss.Scope = append([]string(nil), ss.Scope...) // the caller's own copy
	return ss, nil
}

// tokenDigest is the SHA-256 of a token, without copying it first.
func tokenDigest(token string) [sha256.Size]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token))) // read only
}

// sessionKey is the key of the session a token opens: the first half of
// its digest, never the token.
func sessionKey(sum *[sha256.Size]byte) string { return sessionkey.FromSum(sum) }

// verify is Verify for the gate, given the token's digest: the cached
// entry (shared: the gate only reads it) after the checks that can change
// between calls — revocation, expiry, not-before — which run on every
// call, hit or miss.
func (v *TokenVerifier) verify(ctx context.Context, token string, sum [sha256.Size]byte, nowMs int64) (*verified, error) {
	if len(token) > MaxTokenLen {
		return nil, invalid("The session token is too long")
	}
	e := v.cache.get(sum)
	hit := e != nil
	if !hit {
		// A hit is a token with the digest of one that passed all this.
		if !tokenAlphabet(token) {
			// encoding/base64 skips '\r' and '\n' even in Strict mode:
			// without this check, CR/LF inserted into the signature would
			// give one valid token endless spellings, each a new session
			// key, so a new rate-limit budget and a new set of replay ids.
			return nil, invalid("The session token is malformed")
		}
		c, err := v.verifySigned(token)
		if err != nil {
			return nil, err
		}
		e = &verified{claims: c, sess: &gateSession{SurfaceSession: schema.SurfaceSession{Subject: c.Subject, Audience: c.Audience,
			Scope: c.Scope, IssuedAtMs: c.IssuedAtMs, NotBeforeMs: c.NotBeforeMs, ExpiresAtMs: c.ExpiresAtMs, Agent: c.Agent}, key: sessionKey(&sum)}}
	}
	c := e.claims
	if v.revoked != nil {
		r, err := v.revoked.Revoked(ctx, c.ID, c.Subject)
		if err != nil {
			return nil, fmt.Errorf("pling: revocation check failed: %w", err)
		}
		if r {
			return nil, perr.New(perr.SessionRevoked, "", nil)
		}
	}
	if nowMs >= c.ExpiresAtMs {
		return nil, perr.New(perr.SessionExpired, "", nil)
	}
	if c.NotBeforeMs > nowMs+clockSkewMs {
		return nil, invalid("The session token is not valid yet")
	}
	if !hit {
		// Only a token that verified in full is remembered.
		v.cache.put(sum, e, nowMs)
	}
	return e, nil
}

// verifySigned checks what depends on the token alone: its form, its
// signature by a known key, the shape of its claims and its audience, and
// returns the claims.
func (v *TokenVerifier) verifySigned(token string) (*Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 4 || parts[0] != tokenPrefix || !validKid(parts[1]) {
		return nil, invalid("The session token is malformed")
	}
	key, ok := v.keys[parts[1]]
	if !ok {
		return nil, invalid("The session token was signed by an unknown key")
	}
	sig, err := b64.DecodeString(parts[3])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, invalid("The session token is malformed")
	}
	signed := token[:len(token)-len(parts[3])-1]
	if !ed25519Verify(key, []byte(signed), sig) {
		return nil, invalid("The session token's signature does not verify")
	}
	payload, err := b64.DecodeString(parts[2])
	if err != nil {
		return nil, invalid("The session token is malformed")
	}
	var c Claims
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&c); err != nil || dec.More() {
		return nil, invalid("The session token's claims are malformed")
	}
	switch {
	case c.Subject == "" || len(c.Subject) > 256:
		return nil, invalid("The session token names no subject")
	case c.Audience != v.audience:
		return nil, invalid("The session token is bound to another origin")
	case c.ExpiresAtMs <= 0:
		return nil, invalid("The session token has no expiry")
	case c.ID == "" || len(c.ID) > 128:
		return nil, invalid("The session token has no id")
	case len(c.Scope) == 0 || len(c.Scope) > 64:
		return nil, invalid("The session token's scope is empty or too long")
	}
	for _, p := range c.Scope {
		if !validPattern(p) {
			return nil, invalid("The session token's scope has a malformed pattern")
		}
	}
	return &c, nil
}

// validPattern is the syntax of an exposure pattern: 1–256 chars of the
// capability id alphabet plus '*'.
func validPattern(p string) bool {
	return idchars.Of(p, 1, 256, "._-@:*~")
}
