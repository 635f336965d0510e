package authority_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/runtime"
)

// approvalVerifier is the page's view of the authority's keys, as a page
// that follows it builds it from GET /v1/keys.
func approvalVerifier(t *testing.T, f *fixture) *runtime.TokenVerifier {
	t.Helper()
	st, b := f.call("GET", "/v1/keys", "", nil)
	if st != 200 {
		t.Fatalf("keys: %d %v", st, b)
	}
	keys := map[string]ed25519.PublicKey{}
	for _, k := range b["keys"].([]any) {
		m := k.(map[string]any)
		pub, err := base64.RawURLEncoding.DecodeString(m["publicKey"].(string))
		if err != nil {
			t.Fatal(err)
		}
		keys[m["kid"].(string)] = pub
	}
	v, err := runtime.NewTokenVerifier(keys, origin, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func digest(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }

// TestApprovalBackend: a page sends its challenge to the authority, a
// person approves on the operator's screen, and the page collects — once
// — an approval the authority signed for that exact binding, which the
// page's verifier accepts once; a replay, an approval for other input, a
// forged one and one used as a session token are refused; a denial and
// an expiry give no approval. On both stores.
func TestApprovalBackend(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open(), func(c *authority.Config) { c.MaxBodyBytes = 4096 })
		now := f.clock.Load()
		challenge := func(b string) map[string]any {
			return map[string]any{"binding": b, "capability": "refund@order", "title": "Refund order", "summary": "Refund #1001, €12.00"}
		}
		create := func(b string) (string, string) {
			t.Helper()
			st, body := f.call("POST", "/v1/approvals", "", map[string]any{"audience": origin, "binding": b,
				"challenge": challenge(b), "expiresAtMs": f.clock.Load() + 300_000})
			if st != 201 {
				t.Fatalf("create: %d %v", st, body)
			}
			return body["id"].(string), body["pollSecret"].(string)
		}
		collect := func(id, secret string) (int, map[string]any) {
			return f.call("POST", "/v1/approvals/"+id+"/token", "", map[string]any{"pollSecret": secret})
		}

		id, secret := create(digest('a'))
		if st, b := collect(id, secret); st != 202 || b["status"] != "pending" {
			t.Fatalf("collect before a decision: %d %v", st, b)
		}
		if st, b := f.call("GET", "/v1/approvals/"+id, "", nil); st != 401 && code(b) != string(perr.DelegationCredentialInvalid) {
			t.Errorf("the screen's read without the operator key: %d %v", st, b)
		}
		st, b := f.call("GET", "/v1/approvals/"+id, opKey, nil)
		if st != 200 || b["binding"] != digest('a') || b["status"] != "pending" {
			t.Fatalf("operator read: %d %v", st, b)
		}
		if c, _ := b["challenge"].(map[string]any); c["summary"] != "Refund #1001, €12.00" {
			t.Errorf("the screen is not shown the challenge: %v", b["challenge"])
		}
		if st, b := f.call("POST", "/v1/approvals/"+id+"/approve", opKey, nil); st != 200 {
			t.Fatalf("approve: %d %v", st, b)
		}
		if st, b := f.call("POST", "/v1/approvals/"+id+"/deny", opKey, nil); st == 200 {
			t.Errorf("a decided approval was decided again: %d %v", st, b)
		}
		if st, b := collect(id, "not-the-secret"); st == 200 || code(b) != string(perr.DelegationCredentialInvalid) {
			t.Errorf("collect with a wrong poll secret: %d %v", st, b)
		}
		st, b = collect(id, secret)
		if st != 200 || b["status"] != "approved" {
			t.Fatalf("collect: %d %v", st, b)
		}
		approval := b["approval"].(string)
		if st, b := collect(id, secret); st == 200 {
			t.Errorf("an approval was collected twice: %v", b)
		}

		v := approvalVerifier(t, f)
		var guard runtime.ApprovalGuard
		c, err := v.VerifyApproval(approval, digest('a'), f.clock.Load())
		if err != nil {
			t.Fatalf("the page refuses the authority's approval: %v", err)
		}
		if !guard.Accept(c.ID, c.ExpiresAtMs, f.clock.Load()) {
			t.Fatal("the guard refuses a first approval")
		}
		if guard.Accept(c.ID, c.ExpiresAtMs, f.clock.Load()) {
			t.Error("a replayed approval was accepted twice")
		}
		parts := strings.Split(approval, ".")
		refused := map[string]struct{ approval, binding string }{
			"for other input":        {approval, digest('b')},
			"a forged signature":     {strings.Join([]string{parts[0], parts[1], parts[2], base64.RawURLEncoding.EncodeToString(make([]byte, 64))}, "."), digest('a')},
			"as a session token":     {"pl1." + strings.Join(parts[1:], "."), digest('a')},
			"not an approval at all": {"pa1", digest('a')},
		}
		for name, tc := range refused {
			var pe *perr.Error
			if _, err := v.VerifyApproval(tc.approval, tc.binding, f.clock.Load()); !errors.As(err, &pe) || pe.Code() != perr.PermissionDenied {
				t.Errorf("%s: %v, want PERMISSION_DENIED", name, err)
			}
		}
		if _, err := v.Verify(context.Background(), approval, f.clock.Load()); err == nil {
			t.Error("an approval was accepted as a session token")
		}
		f.advance(6 * time.Minute)
		if _, err := v.VerifyApproval(approval, digest('a'), f.clock.Load()); err == nil {
			t.Error("an expired approval was accepted")
		}

		// A denial gives no approval; neither does a challenge nobody
		// answered in time.
		id, secret = create(digest('c'))
		f.call("POST", "/v1/approvals/"+id+"/deny", opKey, nil)
		if st, b := collect(id, secret); st == 200 || code(b) != string(perr.DelegationRevoked) {
			t.Errorf("collect after a denial: %d %v", st, b)
		}
		id, secret = create(digest('d'))
		f.advance(6 * time.Minute)
		if st, b := f.call("POST", "/v1/approvals/"+id+"/approve", opKey, nil); st == 200 {
			t.Errorf("an expired approval was approved: %v", b)
		}
		if st, b := collect(id, secret); st == 200 || code(b) != string(perr.DelegationExpired) {
			t.Errorf("collect after expiry: %d %v", st, b)
		}
		_ = now
	})
}

// TestApprovalBackendRefusesBadChallenges: the page's challenge is
// checked before it is stored.
func TestApprovalBackendRefusesBadChallenges(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open(), func(c *authority.Config) { c.MaxBodyBytes = 4096 })
		exp := f.clock.Load() + 60_000
		tests := []struct {
			name string
			body map[string]any
			want perr.Code
		}{
			{"another origin", map[string]any{"audience": "https://evil.example", "binding": digest('a'),
				"challenge": map[string]any{"binding": digest('a')}, "expiresAtMs": exp}, perr.DelegationAudienceMismatch},
			{"a challenge for another binding", map[string]any{"audience": origin, "binding": digest('a'),
				"challenge": map[string]any{"binding": digest('b')}, "expiresAtMs": exp}, perr.DelegationBindingMismatch},
			{"not a digest", map[string]any{"audience": origin, "binding": "sha256:XYZ",
				"challenge": map[string]any{"binding": "sha256:XYZ"}, "expiresAtMs": exp}, perr.DelegationRequestInvalid},
			{"too far ahead", map[string]any{"audience": origin, "binding": digest('a'),
				"challenge": map[string]any{"binding": digest('a')}, "expiresAtMs": exp + time.Hour.Milliseconds()}, perr.DelegationRequestInvalid},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if st, b := f.call("POST", "/v1/approvals", "", tc.body); st < 400 || code(b) != string(tc.want) {
					t.Errorf("%d %v, want %s", st, b, tc.want)
				}
			})
		}
	})
}
