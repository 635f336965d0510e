package authority_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// approvalRequest is a request of refund@order on record as a page
// builds it.
func approvalRequest(record string, expiresAtMs int64) runtime.ApprovalRequest {
	return runtime.ApprovalRequest{Capability: "refund@order", Input: map[string]any{"record": record, "reason": "damaged", "amount": 12.5},
		Session: digest('e'), RequestID: "r-" + record, ExpiresAtMs: expiresAtMs, Summary: "Refund " + record}
}

// approvalBody is what a page of session sid sends for rq, with its own
// words (which claim another binding, capability and record: they are
// not used).
func approvalBody(sid string, rq runtime.ApprovalRequest) map[string]any {
	return map[string]any{"sessionId": sid, "audience": origin, "request": rq,
		"challenge": map[string]any{"binding": digest('0'), "capability": "view@order", "title": "Refund order",
			"record": map[string]any{"kind": "order", "id": "ord_other", "label": "someone else's"}, "expiresAtMs": rq.ExpiresAtMs}}
}

func bindingOf(t *testing.T, rq runtime.ApprovalRequest) string {
	t.Helper()
	b, err := rq.Binding()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestApprovalBackend: a delegated session's page sends its request to
// the authority, which computes the binding itself; a person approves on
// the operator's side, and the page collects — once — an approval the
// authority signed for that binding, which the page's verifier accepts
// once; a replay, an approval for other input, a forged one and one used
// as a session token are refused; a denial and an expiry give no
// approval. On both stores.
func TestApprovalBackend(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open(), func(c *authority.Config) { c.MaxBodyBytes = 4096 })
		sid, tok := f.session()
		create := func(rq runtime.ApprovalRequest) (string, string) {
			t.Helper()
			st, body := f.call("POST", "/v1/approvals", tok, approvalBody(sid, rq))
			if st != 201 {
				t.Fatalf("create: %d %v", st, body)
			}
			if body["binding"] != bindingOf(t, rq) {
				t.Fatalf("the authority computed binding %v, the page %s", body["binding"], bindingOf(t, rq))
			}
			return body["id"].(string), body["pollSecret"].(string)
		}
		collect := func(id, secret string) (int, map[string]any) {
			return f.call("POST", "/v1/approvals/"+id+"/token", "", map[string]any{"pollSecret": secret})
		}

		rqA := approvalRequest("ord_1", f.clock.Load()+300_000)
		id, secret := create(rqA)
		if st, b := collect(id, secret); st != 202 || b["status"] != "pending" {
			t.Fatalf("collect before a decision: %d %v", st, b)
		}
		if st, b := f.call("GET", "/v1/approvals/"+id, "", nil); st != 401 && code(b) != string(perr.DelegationCredentialInvalid) {
			t.Errorf("the read without the operator key: %d %v", st, b)
		}
		st, b := f.call("GET", "/v1/approvals/"+id, opKey, nil)
		if st != 200 || b["binding"] != bindingOf(t, rqA) || b["status"] != "pending" || b["sessionId"] != sid {
			t.Fatalf("operator read: %d %v", st, b)
		}
		if r, _ := b["request"].(map[string]any); r["summary"] != "Refund ord_1" {
			t.Errorf("the request is not kept: %v", b["request"])
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
		c, err := v.VerifyApproval(approval, bindingOf(t, rqA), f.clock.Load())
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
		other := rqA
		other.Input = map[string]any{"record": "ord_2", "reason": "damaged", "amount": 12.5}
		refused := map[string]struct{ approval, binding string }{
			"for other input":        {approval, bindingOf(t, other)},
			"a forged signature":     {strings.Join([]string{parts[0], parts[1], parts[2], base64.RawURLEncoding.EncodeToString(make([]byte, 64))}, "."), bindingOf(t, rqA)},
			"as a session token":     {"pl1." + strings.Join(parts[1:], "."), bindingOf(t, rqA)},
			"not an approval at all": {"pa1", bindingOf(t, rqA)},
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
		if _, err := v.VerifyApproval(approval, bindingOf(t, rqA), f.clock.Load()); err == nil {
			t.Error("an expired approval was accepted")
		}

		// A denial gives no approval; neither does a request nobody
		// answered in time.
		id, secret = create(approvalRequest("ord_3", f.clock.Load()+120_000))
		f.call("POST", "/v1/approvals/"+id+"/deny", opKey, nil)
		if st, b := collect(id, secret); st == 200 || code(b) != string(perr.DelegationRevoked) {
			t.Errorf("collect after a denial: %d %v", st, b)
		}
		id, secret = create(approvalRequest("ord_4", f.clock.Load()+120_000))
		f.advance(3 * time.Minute)
		if st, b := f.call("POST", "/v1/approvals/"+id+"/approve", opKey, nil); st == 200 {
			t.Errorf("an expired approval was approved: %v", b)
		}
		if st, b := collect(id, secret); st == 200 || code(b) != string(perr.DelegationExpired) {
			t.Errorf("collect after expiry: %d %v", st, b)
		}
	})
}

// TestApprovalBackendRefusesBadRequests: the request is checked before it
// is stored: a live session of the audience asks, by its own token, from
// the audience's own origin when a browser sends it.
func TestApprovalBackendRefusesBadRequests(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open(), func(c *authority.Config) { c.MaxBodyBytes = 4096 })
		sid, tok := f.session()
		exp := f.clock.Load() + 60_000
		with := func(mod func(b map[string]any, rq *runtime.ApprovalRequest)) map[string]any {
			rq := approvalRequest("ord_1", exp)
			b := approvalBody(sid, rq)
			mod(b, &rq)
			b["request"] = rq
			return b
		}
		tests := []struct {
			name   string
			bearer string
			origin string
			body   map[string]any
			want   perr.Code
		}{
			{"no session token", "", "", with(func(map[string]any, *runtime.ApprovalRequest) {}), perr.DelegationCredentialInvalid},
			{"another session's id", tok, "", with(func(b map[string]any, _ *runtime.ApprovalRequest) { b["sessionId"] = "someone-else" }), perr.DelegationCredentialInvalid},
			{"another audience", tok, "", with(func(b map[string]any, _ *runtime.ApprovalRequest) { b["audience"] = "https://evil.example" }), perr.DelegationAudienceMismatch},
			{"sent from another origin", tok, "https://evil.example", with(func(map[string]any, *runtime.ApprovalRequest) {}), perr.DelegationAudienceMismatch},
			{"not a session digest", tok, "", with(func(_ map[string]any, rq *runtime.ApprovalRequest) { rq.Session = "sha256:XYZ" }), perr.DelegationRequestInvalid},
			{"no input", tok, "", with(func(_ map[string]any, rq *runtime.ApprovalRequest) { rq.Input = nil }), perr.DelegationRequestInvalid},
			{"too far ahead", tok, "", with(func(_ map[string]any, rq *runtime.ApprovalRequest) { rq.ExpiresAtMs = exp + time.Hour.Milliseconds() }), perr.DelegationRequestInvalid},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				var hdr map[string]string
				if tc.origin != "" {
					hdr = map[string]string{"Origin": tc.origin}
				}
				if st, b := f.callWith("POST", "/v1/approvals", tc.bearer, hdr, tc.body); st < 400 || code(b) != string(tc.want) {
					t.Errorf("%d %v, want %s", st, b, tc.want)
				}
			})
		}
	})
}

// callWith is call with extra request headers.
func (f *fixture) callWith(method, path, auth string, header map[string]string, body any) (int, map[string]any) {
	f.t.Helper()
	r := send(f.t, http.DefaultClient, nil, method, f.url+path, auth, header, body)
	return r.Status, r.Body
}

// TestApprovalRequestsBounded: POST /v1/approvals is a resource like the
// others: 2,000 requests from one address without a session store
// nothing (401 until the address's burst is spent, then 429). On both
// stores.
func TestApprovalRequestsBounded(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open(), func(c *authority.Config) { c.MaxBodyBytes = 4096 })
		sid, tok := f.session()
		exp := f.clock.Load() + 120_000
		statuses := map[int]int{}
		for i := range 2000 {
			st, _ := f.call("POST", "/v1/approvals", "", approvalBody(sid, approvalRequest(fmt.Sprint("ord_", i), exp)))
			statuses[st]++
		}
		if diff := cmp.Diff(map[int]int{401: authority.DefaultApprovalBurst, 429: 2000 - authority.DefaultApprovalBurst}, statuses); diff != "" {
			t.Errorf("2,000 requests without a session (-want +got):\n%s", diff)
		}
		f.advance(11 * time.Minute)
		if got := sweepRows(t, f.srv)["approvals"]; got != 0 {
			t.Errorf("the requests without a session left %d approvals", got)
		}

		_ = tok
	})
}

// TestApprovalSessionBound: one session holds at most its bound of
// unexpired approvals (429 past it), and the sweeper deletes them once
// they expired, after which the session may ask again. On both stores.
func TestApprovalSessionBound(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		// The address limit out of the way.
		g := newFixture(t, open(), func(c *authority.Config) { c.MaxBodyBytes = 4096; c.ApprovalBurst = -1 })
		sid, tok := g.session()
		exp := g.clock.Load() + 120_000
		statuses := map[int]int{}
		for i := range 100 {
			st, _ := g.call("POST", "/v1/approvals", tok, approvalBody(sid, approvalRequest(fmt.Sprint("ord_", i), exp)))
			statuses[st]++
		}
		bound := int(authority.DefaultMaxApprovalsPerSession)
		if diff := cmp.Diff(map[int]int{201: bound, 429: 100 - bound}, statuses); diff != "" {
			t.Errorf("100 requests of one session (-want +got):\n%s", diff)
		}
		if got := sweepRows(t, g.srv)["approvals"]; got != 0 {
			t.Errorf("the sweeper deleted %d unexpired approvals", got)
		}
		g.advance(3 * time.Minute)
		if got := sweepRows(t, g.srv)["approvals"]; got != int64(bound) {
			t.Errorf("the sweeper deleted %d expired approvals, want %d", got, bound)
		}
		if st, b := g.call("POST", "/v1/approvals", tok, approvalBody(sid, approvalRequest("ord_x", g.clock.Load()+60_000))); st != 201 {
			t.Errorf("after its approvals expired the session may not ask: %d %v", st, b)
		}
	})
}

// TestApprovalOnlyForTheSendersAudience: with two tenants on one
// authority, a page of one cannot ask for an approval in the other's
// audience: not with the other tenant's origin in the body, not sent
// from the other tenant's origin, not from a foreign origin; and a
// refused browser origin that is no audience gets no CORS answer that
// would let it read the refusal.
func TestApprovalOnlyForTheSendersAudience(t *testing.T) {
	const tenantB = "https://tenant-b.example"
	f := newFixture(t, openSQLite(t), func(c *authority.Config) {
		c.MaxBodyBytes = 4096
		c.Audiences = map[string][]string{origin: {"orders.*", "cart.view"}, tenantB: {"*"}}
	})
	sid, tok := f.session() // a session of origin's tenant
	exp := f.clock.Load() + 60_000
	body := func(audience string) map[string]any {
		b := approvalBody(sid, approvalRequest("ord_1", exp))
		b["audience"] = audience
		return b
	}
	for _, tc := range []struct {
		name, from, audience string
	}{
		{"the other tenant's audience, from its origin", tenantB, tenantB},
		{"the other tenant's audience, no Origin", "", tenantB},
		{"this tenant's audience, from the other tenant's origin", tenantB, origin},
		{"this tenant's audience, from a foreign origin", "https://evil.example", origin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(body(tc.audience))
			req, _ := http.NewRequest("POST", f.url+"/v1/approvals", bytes.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+tok)
			if tc.from != "" {
				req.Header.Set("Origin", tc.from)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var out map[string]any
			_ = json.NewDecoder(res.Body).Decode(&out)
			if res.StatusCode != http.StatusForbidden || code(out) != string(perr.DelegationAudienceMismatch) {
				t.Errorf("%d %v, want 403 %s", res.StatusCode, out, perr.DelegationAudienceMismatch)
			}
			if tc.from == "https://evil.example" && res.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("a foreign origin is answered CORS: %q", res.Header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}

// TestSessionReadsItsApproval: GET /v1/sessions/{id}/approvals/{aid}
// answers the session's own token with what its approval asks and how it
// stands (what pling mcp checks before it asks its host to open a
// screen), and nothing of another session's approval.
func TestSessionReadsItsApproval(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		sid, tok := f.session()
		otherSID, otherTok := f.session()
		rq := approvalRequest("ord_1", f.clock.Load()+120_000)
		st, b := f.call("POST", "/v1/approvals", tok, approvalBody(sid, rq))
		if st != 201 {
			t.Fatalf("create: %d %v", st, b)
		}
		id := b["id"].(string)
		path := func(s string) string { return "/v1/sessions/" + s + "/approvals/" + id }
		read := func(status string) map[string]any {
			return map[string]any{"id": id, "capability": "refund@order", "requestId": "r-ord_1",
				"input": map[string]any{"record": "ord_1", "reason": "damaged", "amount": 12.5}, "status": status, "expiresAtMs": float64(rq.ExpiresAtMs)}
		}
		type step struct {
			name, path, auth string
			status           int
			want             map[string]any
			wantCode         string
		}
		for _, s := range []step{
			{name: "its own", path: path(sid), auth: tok, status: 200, want: read("pending")},
			{name: "another session's token", path: path(sid), auth: otherTok, status: 401, wantCode: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "another session asks for it", path: path(otherSID), auth: otherTok, status: 404, wantCode: "DELEGATION_NOT_FOUND"},
			{name: "no such approval", path: "/v1/sessions/" + sid + "/approvals/nosuchapproval", auth: tok, status: 404, wantCode: "DELEGATION_NOT_FOUND"},
			{name: "no bearer", path: path(sid), status: 401, wantCode: "DELEGATION_CREDENTIAL_INVALID"},
		} {
			t.Run(s.name, func(t *testing.T) {
				st, b := f.call("GET", s.path, s.auth, nil)
				checkAnswer(t, st, b, s.status, s.wantCode, s.want)
			})
		}
		if st, b := f.call("POST", "/v1/approvals/"+id+"/approve", opKey, nil); st != 200 {
			t.Fatalf("approve: %d %v", st, b)
		}
		if st, b := f.call("GET", path(sid), tok, nil); st != 200 || b["status"] != "approved" {
			t.Errorf("after approval: %d %v", st, b)
		}
	})
}
