package authority_test

import (
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
)

// TestSessionInvokeLimitRoutes: POST /v1/sessions/{id}/invokes keeps one
// bucket per session (docs/authority.md "Invoke limit"): its burst, then
// 429 with the wait; another session's bucket apart; refilled at its
// rate; authenticated by the session's own token; a malformed size
// refused.
func TestSessionInvokeLimitRoutes(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		sid, tok := f.session()
		otherSID, otherTok := f.session()
		path := func(s string) string { return "/v1/sessions/" + s + "/invokes" }
		size := map[string]any{"burst": 2, "perSecond": 0.5}
		type step struct {
			name, sid, auth string
			body            any
			advance         time.Duration
			status          int
			want            map[string]any // the whole body, or just the code when wantCode is set
			wantCode        string
		}
		allowed := map[string]any{"status": "allowed"}
		limited := func(ms float64) map[string]any {
			return map[string]any{"error": map[string]any{"code": "RATE_LIMITED", "message": "The session spent its invoke limit",
				"details": map[string]any{"retryAfterMs": ms}}}
		}
		for _, s := range []step{
			{name: "first", sid: sid, auth: tok, body: size, status: 200, want: allowed},
			{name: "second", sid: sid, auth: tok, body: size, status: 200, want: allowed},
			{name: "past the burst", sid: sid, auth: tok, body: size, status: 429, want: limited(2000)},
			{name: "a bigger size asked for does not refill it", sid: sid, auth: tok, body: map[string]any{"burst": 1000, "perSecond": 0.5},
				status: 429, want: limited(2000)},
			{name: "another session has its own", sid: otherSID, auth: otherTok, body: size, status: 200, want: allowed},
			{name: "refilled at its rate", sid: sid, auth: tok, body: size, advance: 2 * time.Second, status: 200, want: allowed},
			{name: "and spent again", sid: sid, auth: tok, body: size, status: 429, want: limited(2000)},
			{name: "a smaller size caps the bucket", sid: otherSID, auth: otherTok, body: map[string]any{"burst": 1, "perSecond": 0}, status: 200, want: allowed},
			{name: "never refills", sid: otherSID, auth: otherTok, body: map[string]any{"burst": 1, "perSecond": 0}, status: 429, want: limited(3_600_000)},
			{name: "no bearer", sid: sid, body: size, status: 401, wantCode: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "another session's token", sid: sid, auth: otherTok, body: size, status: 401, wantCode: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "operator key is no session token", sid: sid, auth: opKey, body: size, status: 401, wantCode: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "no size", sid: sid, auth: tok, status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "burst zero", sid: sid, auth: tok, body: map[string]any{"burst": 0, "perSecond": 1}, status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "burst past the bound", sid: sid, auth: tok, body: map[string]any{"burst": 100_001, "perSecond": 1}, status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "negative rate", sid: sid, auth: tok, body: map[string]any{"burst": 1, "perSecond": -1}, status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "unknown field", sid: sid, auth: tok, body: map[string]any{"burst": 1, "perSecond": 1, "session": "x"}, status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
		} {
			t.Run(s.name, func(t *testing.T) {
				f.advance(s.advance)
				st, b := f.call("POST", path(s.sid), s.auth, s.body)
				checkAnswer(t, st, b, s.status, s.wantCode, s.want)
			})
		}
		t.Run("revoked session", func(t *testing.T) {
			if st, b := f.call("POST", "/v1/sessions/"+sid+"/revoke", opKey, nil); st != 200 {
				t.Fatalf("revoke: %d %v", st, b)
			}
			if st, b := f.call("POST", path(sid), tok, size); st != 410 || code(b) != "DELEGATION_REVOKED" {
				t.Errorf("%d %v, want 410 DELEGATION_REVOKED", st, b)
			}
		})
	})
}

var _ authority.RateStore = authority.SQLStore(nil)
