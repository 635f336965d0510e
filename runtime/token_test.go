package runtime_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/runtime"
)

const origin = "https://shop.example"

func testKey(seed byte) ed25519.PrivateKey {
	var s [ed25519.SeedSize]byte
	for i := range s {
		s[i] = seed
	}
	return ed25519.NewKeyFromSeed(s[:])
}

func claims() runtime.Claims {
	return runtime.Claims{Subject: "alice", Audience: origin, Scope: []string{"cart.*"}, IssuedAtMs: 1000,
		NotBeforeMs: 1000, ExpiresAtMs: 60_000, ID: "tok-1"}
}

func mint(t testing.TB, key ed25519.PrivateKey, kid string, c runtime.Claims) string {
	t.Helper()
	tok, err := runtime.MintToken(key, kid, c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestTokenVerifier(t *testing.T) {
	key, other := testKey(1), testKey(2)
	revoked := runtime.RevocationFunc(func(_ context.Context, id, _ string) (bool, error) {
		switch id {
		case "revoked":
			return true, nil
		case "checker-down":
			return false, errors.New("revocation store down")
		}
		return false, nil
	})
	v, err := runtime.NewTokenVerifier(map[string]ed25519.PublicKey{"k1": key.Public().(ed25519.PublicKey)}, origin, revoked)
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(*runtime.Claims)) runtime.Claims { c := claims(); f(&c); return c }
	good := mint(t, key, "k1", claims())
	tests := []struct {
		name  string
		token string
		now   int64
		code  perr.Code // "" = valid; "plain" = a non-registry error
	}{
		{"valid", good, 2000, ""},
		{"valid within the not-before skew", mint(t, key, "k1", with(func(c *runtime.Claims) { c.NotBeforeMs = 2000 + runtime.ClockSkew.Milliseconds() })), 2000, ""},
		{"not before, beyond the skew", mint(t, key, "k1", with(func(c *runtime.Claims) { c.NotBeforeMs = 2001 + runtime.ClockSkew.Milliseconds() })), 2000, perr.SessionInvalid},
		{"expired at exp", good, 60_000, perr.SessionExpired},
		{"expired after exp", good, 99_000, perr.SessionExpired},
		{"revoked", mint(t, key, "k1", with(func(c *runtime.Claims) { c.ID = "revoked" })), 2000, perr.SessionRevoked},
		{"revocation checker fails", mint(t, key, "k1", with(func(c *runtime.Claims) { c.ID = "checker-down" })), 2000, "plain"},
		{"other audience", mint(t, key, "k1", with(func(c *runtime.Claims) { c.Audience = "https://evil.example" })), 2000, perr.SessionInvalid},
		{"unknown key id", mint(t, key, "k2", claims()), 2000, perr.SessionInvalid},
		{"signed by another key", mint(t, other, "k1", claims()), 2000, perr.SessionInvalid},
		{"payload swapped", swapPayload(t, good, mint(t, key, "k1", with(func(c *runtime.Claims) { c.Scope = []string{"*"} }))), 2000, perr.SessionInvalid},
		{"signature cut", good[:len(good)-2], 2000, perr.SessionInvalid},
		{"empty", "", 2000, perr.SessionInvalid},
		{"wrong prefix", "pl2" + good[3:], 2000, perr.SessionInvalid},
		{"three parts", "pl1.k1.e30", 2000, perr.SessionInvalid},
		{"five parts", good + ".x", 2000, perr.SessionInvalid},
		{"too long", good + strings.Repeat("A", runtime.MaxTokenLen), 2000, perr.SessionInvalid},
		{"not base64", "pl1.k1.!!!.???", 2000, perr.SessionInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := v.Verify(context.Background(), tt.token, tt.now)
			var pe *perr.Error
			switch {
			case tt.code == "":
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if s.Subject != "alice" || s.ExpiresAtMs != 60_000 || len(s.Scope) == 0 {
					t.Fatalf("session = %+v", s)
				}
			case tt.code == "plain":
				if err == nil || errors.As(err, &pe) {
					t.Fatalf("err = %v, want a plain (non-registry) error", err)
				}
			default:
				if !errors.As(err, &pe) || pe.Code() != tt.code {
					t.Fatalf("err = %v, want %s", err, tt.code)
				}
			}
		})
	}
}

// swapPayload puts b's payload under a's signature.
func swapPayload(t *testing.T, a, b string) string {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	return strings.Join([]string{pa[0], pa[1], pb[2], pa[3]}, ".")
}

func TestMintTokenRefusesBadClaims(t *testing.T) {
	key := testKey(1)
	for name, c := range map[string]runtime.Claims{
		"no subject":  {Audience: origin, Scope: []string{"*"}, ExpiresAtMs: 1, ID: "x"},
		"no audience": {Subject: "a", Scope: []string{"*"}, ExpiresAtMs: 1, ID: "x"},
		"no expiry":   {Subject: "a", Audience: origin, Scope: []string{"*"}, ID: "x"},
		"no id":       {Subject: "a", Audience: origin, Scope: []string{"*"}, ExpiresAtMs: 1},
		"no scope":    {Subject: "a", Audience: origin, ExpiresAtMs: 1, ID: "x"},
		"bad pattern": {Subject: "a", Audience: origin, Scope: []string{"cart add"}, ExpiresAtMs: 1, ID: "x"},
	} {
		if _, err := runtime.MintToken(key, "k1", c); err == nil {
			t.Errorf("%s: MintToken accepted it", name)
		}
	}
	if _, err := runtime.MintToken(key, "bad kid!", claims()); err == nil {
		t.Error("MintToken accepted a bad key id")
	}
}

// TestTokenThroughTheGate checks that a minted token opens exactly its
// scope, through Handle.
func TestTokenThroughTheGate(t *testing.T) {
	key := testKey(3)
	v := verifierK1(t, key)
	clock := runtime.NewFakeClock(5000)
	rt := runtime.New(runtime.WithClock(clock), runtime.WithExpose("*"), runtime.WithSessions(v, true), runtime.WithOrigin(origin))
	for _, id := range []string{"cart.add", "admin.wipe"} {
		if _, err := rt.DeclareAction(runtime.Action{ID: id, Title: id, Run: func(context.Context, *runtime.Call) (any, error) { return "ok", nil }}); err != nil {
			t.Fatal(err)
		}
	}
	tok := mint(t, key, "k1", claims())
	call := func(id, capability string) string {
		return string(rt.Handle(context.Background(), []byte(`{"protocol":"pling.surface/0.1","id":"`+id+`","method":"invoke","session":"`+tok+`","capability":"`+capability+`"}`)))
	}
	if got := call("r1", "cart.add"); !strings.Contains(got, `"ok":true`) || strings.Contains(got, `"error"`) {
		t.Errorf("in scope: %s", got)
	}
	if got := call("r2", "admin.wipe"); !strings.Contains(got, `"CAPABILITY_NOT_EXPOSED"`) {
		t.Errorf("out of scope: %s", got)
	}
	clock.Advance(60_000)
	if got := call("r3", "cart.add"); !strings.Contains(got, `"SESSION_EXPIRED"`) {
		t.Errorf("expired: %s", got)
	}
	for _, r := range []string{call("r4", "cart.add")} {
		if strings.Contains(r, tok) {
			t.Errorf("the token leaked into a response: %s", r)
		}
	}
}

// FuzzTokenVerify: arbitrary text never panics and never verifies, and a
// valid token with any byte changed never verifies.
func FuzzTokenVerify(f *testing.F) {
	key := testKey(4)
	v := verifierK1(f, key)
	good := mint(f, key, "k1", claims())
	f.Add(good, 0, byte(0))
	f.Add("pl1.k1.e30.AAAA", 3, byte('x'))
	f.Add("", 0, byte(0))
	f.Add(good+".", 10, byte('A'))
	f.Fuzz(func(t *testing.T, tok string, at int, b byte) {
		if tok == good {
			// Flip one byte of the real token: it must stop verifying.
			if at < 0 {
				at = -at
			}
			i := at % len(good)
			if good[i] == b {
				return
			}
			tok = good[:i] + string([]byte{b}) + good[i+1:]
			if tok == good {
				return
			}
		}
		s, err := v.Verify(context.Background(), tok, 2000)
		if err == nil {
			t.Fatalf("an unsigned or altered token verified: %q → %+v", tok, s)
		}
	})
}

// A valid token has one spelling. encoding/base64 ignores '\r' and '\n'
// even in Strict mode, so a CR or LF inserted into the signature would
// leave it verifying unless refused (testdata/fuzz/FuzzTokenVerify/
// c7857da06e7dd439 is such a token) — and every spelling would be a new
// session key: a new rate-limit budget and a new set of replay ids.
func TestTokenHasOneSpelling(t *testing.T) {
	key := testKey(5)
	v := verifierK1(t, key)
	good := mint(t, key, "k1", claims())
	if _, err := v.Verify(context.Background(), good, 2000); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= len(good); i++ {
		for _, ins := range []string{"\r", "\n", "\r\n", " ", "\t", "=", "+", "/", "\x00"} {
			bad := good[:i] + ins + good[i:]
			var pe *perr.Error
			if _, err := v.Verify(context.Background(), bad, 2000); !errors.As(err, &pe) || pe.Code() != perr.SessionInvalid {
				t.Fatalf("%q inserted at %d: %v, want SESSION_INVALID", ins, i, err)
			}
		}
	}

	// Through Handle: another spelling of the token does not open a second
	// replay namespace or rate-limit budget.
	rt := runtime.New(runtime.WithClock(runtime.NewFakeClock(5000)), runtime.WithExpose("*"),
		runtime.WithSessions(v, true), runtime.WithOrigin(origin),
		runtime.WithRateLimit(runtime.RateLimit{Invoke: runtime.Bucket{Burst: 10}}))
	var runs atomic.Int64
	if _, err := rt.DeclareAction(runtime.Action{ID: "cart.pay", Title: "Pay",
		Run: func(context.Context, *runtime.Call) (any, error) { runs.Add(1); return "paid", nil }}); err != nil {
		t.Fatal(err)
	}
	cut := strings.LastIndexByte(good, '.') + 10
	for _, tok := range []string{good, good[:cut] + "\r" + good[cut:], good[:cut] + "\n" + good[cut:]} {
		sj, _ := json.Marshal(tok)
		rt.Handle(context.Background(), []byte(`{"protocol":"pling.surface/0.1","id":"same-id","method":"invoke","session":`+string(sj)+`,"capability":"cart.pay"}`))
	}
	if runs.Load() != 1 {
		t.Errorf("one request id ran %d times under spellings of one token, want once", runs.Load())
	}
}

// verifierK1 verifies tokens of origin signed by key as key id k1.
func verifierK1(tb testing.TB, key ed25519.PrivateKey) *runtime.TokenVerifier {
	tb.Helper()
	v, err := runtime.NewTokenVerifier(map[string]ed25519.PublicKey{"k1": key.Public().(ed25519.PublicKey)}, origin, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}
