package runtime

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// The verified-token cache saves the Ed25519 verification of a token seen
// before, and nothing else: revocation, expiry and not-before are decided
// on every call, and any other token (a byte changed) is verified in full.

const cacheOrigin = "https://shop.example"

// countVerifies counts the signature verifications from here to the end of
// the test.
func countVerifies(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	orig := ed25519Verify
	ed25519Verify = func(pub ed25519.PublicKey, msg, sig []byte) bool {
		n.Add(1)
		return orig(pub, msg, sig)
	}
	t.Cleanup(func() { ed25519Verify = orig })
	return &n
}

func cacheKey() ed25519.PrivateKey {
	var seed [ed25519.SeedSize]byte
	for i := range seed {
		seed[i] = 9
	}
	return ed25519.NewKeyFromSeed(seed[:])
}

func cacheClaims(id string) Claims {
	return Claims{Subject: "alice", Audience: cacheOrigin, Scope: []string{"cart.*"},
		IssuedAtMs: 1000, NotBeforeMs: 1000, ExpiresAtMs: 60_000, ID: id}
}

func cacheMint(t testing.TB, key ed25519.PrivateKey, c Claims) string {
	t.Helper()
	tok, err := MintToken(key, "k1", c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func cacheVerifier(t testing.TB, key ed25519.PrivateKey, revoked RevocationChecker) *TokenVerifier {
	t.Helper()
	v, err := NewTokenVerifier(map[string]ed25519.PublicKey{"k1": key.Public().(ed25519.PublicKey)}, cacheOrigin, revoked)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func codeOf(err error) string {
	var pe *perr.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &pe):
		return string(pe.Code())
	default:
		return "plain"
	}
}

func TestTokenCacheSkipsOnlyTheSignature(t *testing.T) {
	n := countVerifies(t)
	key := cacheKey()
	v := cacheVerifier(t, key, nil)
	tok := cacheMint(t, key, cacheClaims("t1"))
	ctx := context.Background()

	s1, err := v.Verify(ctx, tok, 2000)
	if err != nil || n.Load() != 1 {
		t.Fatalf("first Verify: %v, %d signature checks", err, n.Load())
	}
	for range 5 {
		s2, err := v.Verify(ctx, tok, 3000)
		if err != nil {
			t.Fatalf("cached Verify: %v", err)
		}
		if s2.Subject != s1.Subject || s2.ExpiresAtMs != s1.ExpiresAtMs || strings.Join(s2.Scope, ",") != strings.Join(s1.Scope, ",") {
			t.Fatalf("cached session %+v, want %+v", s2, s1)
		}
	}
	if n.Load() != 1 {
		t.Errorf("%d signature checks for 6 calls with one token, want 1", n.Load())
	}
	// The returned scope is the caller's: changing it changes no cached state.
	s, _ := v.Verify(ctx, tok, 3000)
	s.Scope[0] = "*"
	if s, _ := v.Verify(ctx, tok, 3000); s.Scope[0] != "cart.*" {
		t.Errorf("a caller changed the cached scope: %v", s.Scope)
	}
	// Any other byte string is verified in full, and fails.
	for i := range tok {
		if tok[i] == '.' {
			continue
		}
		b := byte('A')
		if tok[i] == 'A' {
			b = 'B'
		}
		bad := tok[:i] + string(b) + tok[i+1:]
		if _, err := v.Verify(ctx, bad, 3000); err == nil {
			t.Fatalf("byte %d changed: verified", i)
		}
	}
	if v.cache.size() != 1 {
		t.Errorf("cache holds %d tokens, want 1 (failures are not cached)", v.cache.size())
	}
}

// Revocation, expiry and not-before are checked on every call, hit or miss.
func TestTokenCacheRechecksTimeAndRevocation(t *testing.T) {
	n := countVerifies(t)
	key := cacheKey()
	var revoked, down atomic.Bool
	v := cacheVerifier(t, key, RevocationFunc(func(_ context.Context, id, sub string) (bool, error) {
		if id != "t1" || sub != "alice" {
			t.Errorf("revocation asked about %q/%q", id, sub)
		}
		if down.Load() {
			return false, errors.New("revocation store down")
		}
		return revoked.Load(), nil
	}))
	tok := cacheMint(t, key, cacheClaims("t1"))
	ctx := context.Background()
	verify := func(now int64) string { _, err := v.Verify(ctx, tok, now); return codeOf(err) }

	steps := []struct {
		name string
		set  func()
		now  int64
		want string
	}{
		{"valid (cached)", func() {}, 2000, "ok"},
		{"revoked after caching", func() { revoked.Store(true) }, 2000, string(perr.SessionRevoked)},
		{"unrevoked", func() { revoked.Store(false) }, 2000, "ok"},
		{"checker fails", func() { down.Store(true) }, 2000, "plain"},
		{"checker back", func() { down.Store(false) }, 2000, "ok"},
		{"just before exp", func() {}, 59_999, "ok"},
		{"at exp", func() {}, 60_000, string(perr.SessionExpired)},
		{"after exp", func() {}, 99_000, string(perr.SessionExpired)},
		{"revoked wins over expired", func() { revoked.Store(true) }, 99_000, string(perr.SessionRevoked)},
		{"clock back before nbf − skew", func() { revoked.Store(false) }, 1000 - clockSkewMs - 1, string(perr.SessionInvalid)},
		{"clock back within the skew", func() {}, 1000 - clockSkewMs, "ok"},
	}
	for _, st := range steps {
		st.set()
		if got := verify(st.now); got != st.want {
			t.Errorf("%s: %s, want %s", st.name, got, st.want)
		}
	}
	if n.Load() != 1 {
		t.Errorf("%d signature checks, want 1: every step after the first is a hit", n.Load())
	}
}

// A token that failed for a reason of time or revocation is not cached:
// it is verified again, and once its time has come it verifies.
func TestTokenCacheKeepsOnlySuccesses(t *testing.T) {
	n := countVerifies(t)
	key := cacheKey()
	var revoked atomic.Bool
	revoked.Store(true)
	v := cacheVerifier(t, key, RevocationFunc(func(context.Context, string, string) (bool, error) { return revoked.Load(), nil }))
	ctx := context.Background()
	c := cacheClaims("t1")
	c.NotBeforeMs = 100_000
	c.ExpiresAtMs = 200_000
	tok := cacheMint(t, key, c)
	if _, err := v.Verify(ctx, tok, 50_000); codeOf(err) != string(perr.SessionRevoked) {
		t.Fatalf("revoked: %v", err)
	}
	revoked.Store(false)
	if _, err := v.Verify(ctx, tok, 50_000); codeOf(err) != string(perr.SessionInvalid) {
		t.Fatalf("not yet valid: %v", err)
	}
	if v.cache.size() != 0 || n.Load() != 2 {
		t.Fatalf("after two failures: %d cached, %d signature checks; want 0, 2", v.cache.size(), n.Load())
	}
	if _, err := v.Verify(ctx, tok, 100_000); err != nil {
		t.Fatalf("at nbf: %v", err)
	}
	if v.cache.size() != 1 || n.Load() != 3 {
		t.Errorf("after a success: %d cached, %d signature checks; want 1, 3", v.cache.size(), n.Load())
	}
}

// The cache is bounded; expired tokens go first, and a token dropped from
// it verifies again, in full.
func TestTokenCacheBounded(t *testing.T) {
	key := cacheKey()
	v := cacheVerifier(t, key, nil)
	ctx := context.Background()
	const extra = 300
	toks := make([]string, verifiedCacheSize+extra)
	for i := range toks {
		c := cacheClaims(fmt.Sprint("t", i))
		if i < verifiedCacheSize {
			c.ExpiresAtMs = 10_000 // the first ones expire early
		}
		toks[i] = cacheMint(t, key, c)
	}
	for i, tok := range toks[:verifiedCacheSize] {
		if _, err := v.Verify(ctx, tok, 2000); err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
	}
	if v.cache.size() != verifiedCacheSize {
		t.Fatalf("cache holds %d, want %d", v.cache.size(), verifiedCacheSize)
	}
	// At 10,000 the first ones have expired: the next insert drops them all.
	if _, err := v.Verify(ctx, toks[verifiedCacheSize], 10_000); err != nil {
		t.Fatal(err)
	}
	if v.cache.size() != 1 {
		t.Errorf("after the expired tokens were swept: %d held, want 1", v.cache.size())
	}
	// Full of live tokens: the bound holds and every token still verifies.
	n := countVerifies(t)
	live := make([]string, 0, 2*verifiedCacheSize)
	for i := range 2 * verifiedCacheSize {
		live = append(live, cacheMint(t, key, cacheClaims(fmt.Sprint("live", i))))
	}
	for round := range 2 {
		for i, tok := range live {
			if _, err := v.Verify(ctx, tok, 20_000); err != nil {
				t.Fatalf("round %d, token %d: %v", round, i, err)
			}
			if v.cache.size() > verifiedCacheSize {
				t.Fatalf("cache holds %d > %d", v.cache.size(), verifiedCacheSize)
			}
		}
	}
	if got := n.Load(); got <= int64(len(live)) {
		t.Errorf("%d signature checks for 2×%d distinct tokens through a cache of %d: dropped tokens were not re-verified", got, len(live), verifiedCacheSize)
	}
}

// Concurrent callers, same and different tokens (run with -race).
func TestTokenCacheConcurrent(t *testing.T) {
	key := cacheKey()
	v := cacheVerifier(t, key, nil)
	toks := make([]string, 8)
	for i := range toks {
		toks[i] = cacheMint(t, key, cacheClaims(fmt.Sprint("c", i)))
	}
	bad := toks[0][:len(toks[0])-2] + "AA"
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				tok := toks[(g+i)%len(toks)]
				if _, err := v.Verify(context.Background(), tok, 2000); err != nil {
					t.Errorf("valid token: %v", err)
					return
				}
				if _, err := v.Verify(context.Background(), bad, 2000); err == nil {
					t.Errorf("the altered token verified")
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Through Handle: with the token cached, expiry and revocation still close
// the session on the very next request.
func TestTokenCacheThroughTheGate(t *testing.T) {
	n := countVerifies(t)
	key := cacheKey()
	var revoked atomic.Bool
	v := cacheVerifier(t, key, RevocationFunc(func(context.Context, string, string) (bool, error) { return revoked.Load(), nil }))
	clock := NewFakeClock(2000)
	rt := New(WithClock(clock), WithExpose("*"), WithSessions(v, true), WithOrigin(cacheOrigin))
	if _, err := rt.DeclareAction(Action{ID: "cart.add", Title: "Add"}); err != nil {
		t.Fatal(err)
	}
	tok := cacheMint(t, key, cacheClaims("t1"))
	k := 0
	call := func() string {
		k++
		out := rt.Handle(context.Background(), []byte(fmt.Sprintf(
			`{"protocol":%q,"id":"r%d","method":"invoke","session":%q,"capability":"cart.add"}`, schema.Protocol, k, tok)))
		if strings.Contains(string(out), tok) {
			t.Errorf("the token is in a response")
		}
		switch {
		case strings.Contains(string(out), `"ok":true`):
			return "ok"
		case strings.Contains(string(out), `"SESSION_REVOKED"`):
			return "SESSION_REVOKED"
		case strings.Contains(string(out), `"SESSION_EXPIRED"`):
			return "SESSION_EXPIRED"
		}
		return string(out)
	}
	for _, st := range []struct {
		set  func()
		want string
	}{
		{func() {}, "ok"},
		{func() {}, "ok"},
		{func() { revoked.Store(true) }, "SESSION_REVOKED"},
		{func() { revoked.Store(false) }, "ok"},
		{func() { clock.Advance(58_000) }, "SESSION_EXPIRED"},
	} {
		st.set()
		if got := call(); got != st.want {
			t.Errorf("request %d: %s, want %s", k, got, st.want)
		}
	}
	if n.Load() != 1 {
		t.Errorf("%d signature checks for %d requests with one token, want 1", n.Load(), k)
	}
}
