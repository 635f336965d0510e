package authority_test

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
)

// TestSharedReplayGuardRoutes: every status and code of the §9.3 routes
// (docs/authority.md "Shared replay guard").
func TestSharedReplayGuardRoutes(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open(), func(c *authority.Config) { c.MaxRequestsPerSession = 3 })
		sid, tok := f.session()
		otherSID, otherTok := f.session()
		revSID, revTok := f.session()
		if st, b := f.call("POST", "/v1/sessions/"+revSID+"/revoke", opKey, nil); st != 200 {
			t.Fatalf("revoke: %d %v", st, b)
		}
		req := func(s, r string) string { return "/v1/sessions/" + s + "/requests/" + r }
		type step struct {
			name, method, path, auth string
			body                     any
			status                   int
			want                     map[string]any // the whole body, or just the code when wantCode is set
			wantCode                 string
		}
		steps := []step{
			{name: "first consume", method: "POST", path: req(sid, "r-1"), auth: tok, status: 201, want: map[string]any{"status": "consumed"}},
			{name: "second consume: pending", method: "POST", path: req(sid, "r-1"), auth: tok, status: 409,
				want: map[string]any{"previous": map[string]any{"completed": false}}},
			{name: "complete", method: "PUT", path: req(sid, "r-1") + "/complete", auth: tok, body: map[string]any{"ok": false, "code": "NOT_FOUND"},
				status: 200, want: map[string]any{"status": "completed"}},
			{name: "consume after complete", method: "POST", path: req(sid, "r-1"), auth: tok, status: 409,
				want: map[string]any{"previous": map[string]any{"completed": true, "ok": false, "code": "NOT_FOUND"}}},
			{name: "complete twice", method: "PUT", path: req(sid, "r-1") + "/complete", auth: tok, body: map[string]any{"ok": true, "code": ""},
				status: 409, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "complete ok without code", method: "POST", path: req(sid, "r-2"), auth: tok, status: 201, want: map[string]any{"status": "consumed"}},
			{name: "complete ok", method: "PUT", path: req(sid, "r-2") + "/complete", auth: tok, body: map[string]any{"ok": true},
				status: 200, want: map[string]any{"status": "completed"}},
			{name: "ok completion has no code", method: "POST", path: req(sid, "r-2"), auth: tok, status: 409,
				want: map[string]any{"previous": map[string]any{"completed": true, "ok": true}}},
			{name: "complete unconsumed", method: "PUT", path: req(sid, "never") + "/complete", auth: tok, body: map[string]any{"ok": true},
				status: 404, wantCode: "DELEGATION_NOT_FOUND"},
			{name: "same id, other session", method: "POST", path: req(otherSID, "r-1"), auth: otherTok, status: 201, want: map[string]any{"status": "consumed"}},
			{name: "no bearer", method: "POST", path: req(sid, "r-3"), status: 401, wantCode: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "another session's token", method: "POST", path: req(sid, "r-3"), auth: otherTok, status: 401, wantCode: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "operator key is no session token", method: "POST", path: req(sid, "r-3"), auth: opKey, status: 401, wantCode: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "unknown session", method: "POST", path: req("nosuchsession", "r-3"), auth: tok, status: 401, wantCode: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "revoked session", method: "POST", path: req(revSID, "r-1"), auth: revTok, status: 410, wantCode: "DELEGATION_REVOKED"},
			{name: "request id alphabet", method: "POST", path: req(sid, "r%20x"), auth: tok, status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "request id length", method: "POST", path: req(sid, strings.Repeat("x", 129)), auth: tok, status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "session id alphabet", method: "POST", path: req("a.b", "r-3"), auth: tok, status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "complete without ok", method: "PUT", path: req(sid, "r-2") + "/complete", auth: tok, body: map[string]any{"code": "X"},
				status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "complete with a bad code", method: "PUT", path: req(sid, "r-2") + "/complete", auth: tok, body: map[string]any{"ok": false, "code": "not a code"},
				status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "complete with unknown field", method: "PUT", path: req(sid, "r-2") + "/complete", auth: tok, body: map[string]any{"ok": true, "result": 1},
				status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "consume with a body", method: "POST", path: req(sid, "r-3"), auth: tok, body: map[string]any{"x": 1},
				status: 400, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "third record", method: "POST", path: req(sid, "r-3"), auth: tok, status: 201, want: map[string]any{"status": "consumed"}},
			{name: "bound per session", method: "POST", path: req(sid, "r-4"), auth: tok, status: 429, wantCode: "DELEGATION_REQUEST_INVALID"},
			{name: "a full session still answers replays", method: "POST", path: req(sid, "r-3"), auth: tok, status: 409,
				want: map[string]any{"previous": map[string]any{"completed": false}}},
		}
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				st, b := f.call(s.method, s.path, s.auth, s.body)
				checkAnswer(t, st, b, s.status, s.wantCode, s.want)
			})
		}
		t.Run("expired session", func(t *testing.T) {
			f.advance(601 * time.Second)
			if st, b := f.call("POST", req(sid, "r-9"), tok, nil); st != 410 || code(b) != "DELEGATION_EXPIRED" {
				t.Errorf("%d %v, want 410 DELEGATION_EXPIRED", st, b)
			}
		})
	})
}

// TestConsumeRequestOnce: of many concurrent consumes of one id exactly
// one is 201.
func TestConsumeRequestOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		sid, tok := f.session()
		var wg sync.WaitGroup
		var created, replayed atomic.Int32
		for range 24 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch st, b := f.call("POST", "/v1/sessions/"+sid+"/requests/same", tok, nil); st {
				case 201:
					created.Add(1)
				case 409:
					replayed.Add(1)
				default:
					t.Errorf("unexpected %d %v", st, b)
				}
			}()
		}
		wg.Wait()
		if created.Load() != 1 || replayed.Load() != 23 {
			t.Fatalf("created %d, replayed %d; want 1 and 23", created.Load(), replayed.Load())
		}
	})
}

// TestPageRoutesCORS: the routes a page calls answer its origin (an
// audience) and only it; the other routes offer nothing to a browser.
func TestPageRoutesCORS(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		cases := []struct {
			name, method, path, origin, reqMethod string
			status                                int
			allowOrigin, allowMethods, allowHdrs  string
		}{
			{"keys, page origin", "GET", "/v1/keys", origin, "", 200, origin, "", ""},
			{"feed, page origin", "GET", "/v1/revocations", origin, "", 200, origin, "", ""},
			{"keys, other origin", "GET", "/v1/keys", "https://evil.example", "", 200, "", "", ""},
			{"preflight requests", "OPTIONS", "/v1/sessions/s1/requests/r1", origin, "POST", 204, origin, "POST, PUT", "Authorization, Content-Type"},
			{"preflight complete", "OPTIONS", "/v1/sessions/s1/requests/r1/complete", origin, "PUT", 204, origin, "POST, PUT", "Authorization, Content-Type"},
			{"preflight feed", "OPTIONS", "/v1/revocations", origin, "GET", 204, origin, "GET", "Authorization, Content-Type"},
			{"preflight, other origin", "OPTIONS", "/v1/sessions/s1/requests/r1", "https://evil.example", "POST", 403, "", "", ""},
			{"preflight, operator route", "OPTIONS", "/v1/delegations/x/approve", origin, "POST", 405, "", "", ""},
			{"operator route, page origin", "GET", "/v1/delegations/x", origin, "", 401, "", "", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				req, _ := http.NewRequest(c.method, f.url+c.path, nil)
				req.Header.Set("Origin", c.origin)
				if c.reqMethod != "" {
					req.Header.Set("Access-Control-Request-Method", c.reqMethod)
					req.Header.Set("Access-Control-Request-Headers", "authorization")
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				got := []any{res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"),
					res.Header.Get("Access-Control-Allow-Methods"), res.Header.Get("Access-Control-Allow-Headers")}
				want := []any{c.status, c.allowOrigin, c.allowMethods, c.allowHdrs}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("status, allow-origin, -methods, -headers (-want +got)\n%s", diff)
				}
			})
		}
	})
}

// checkAnswer checks an answer's status and, when wantCode is set, its
// error code, else its whole body.
func checkAnswer(t *testing.T, st int, b map[string]any, status int, wantCode string, want map[string]any) {
	t.Helper()
	if st != status {
		t.Errorf("status %d, want %d (%v)", st, status, b)
	}
	if wantCode != "" {
		if code(b) != wantCode {
			t.Errorf("code %q, want %q (%v)", code(b), wantCode, b)
		}
		return
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("body (-want +got)\n%s", diff)
	}
}
