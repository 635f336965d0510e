package authority_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/httpserver"
	"github.com/pling-go/pling/internal/testing/httpcheck"
)

// Attacks written from the protocol against the authority's routes
// (docs/authority.md): each case is what a hostile client sends.

// handlerFixture is a fixture served by the production Handler (metrics
// included), on SQLite.
func handlerFixture(t *testing.T, mods ...func(*authority.Config)) *fixture {
	t.Helper()
	f := newFixture(t, openSQLite(t), mods...)
	hs := httptest.NewServer(f.srv.Handler())
	t.Cleanup(hs.Close)
	f.url = hs.URL
	return f
}

var waitersRE = regexp.MustCompile(`(?m)^pling_authority_feed_waiters (\d+)`)

// waitWaiters waits until n long-polls are parked on the feed.
func (f *fixture) waitWaiters(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(f.url + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if m := waitersRE.FindSubmatch(b); m != nil && string(m[1]) == strconv.Itoa(n) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("never saw %d feed waiters", n)
}

// TestRevocationFeedWaitersBounded: long-polls parked on one instance are
// bounded (MaxFeedWaiters); one past the bound is refused at once with 503
// and Retry-After (a follower backs off), while an answer that does not
// wait (waitSeconds=0) is still given.
func TestRevocationFeedWaitersBounded(t *testing.T) {
	f := handlerFixture(t, func(c *authority.Config) { c.MaxFeedWaiters = 2 })
	done := make(chan int, 2)
	for range 2 {
		go func() { st, _ := f.call("GET", "/v1/revocations?after=0&waitSeconds=3", "", nil); done <- st }()
	}
	f.waitWaiters(t, 2)
	t.Run("one past the bound", func(t *testing.T) {
		res, err := http.Get(f.url + "/v1/revocations?after=0&waitSeconds=3")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Fatalf("status %d Retry-After %q, want 503 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
		}
	})
	t.Run("a poll that does not wait", func(t *testing.T) {
		if st, b := f.call("GET", "/v1/revocations?after=0", "", nil); st != 200 {
			t.Fatalf("%d %v", st, b)
		}
	})
	for range 2 {
		if st := <-done; st != 200 {
			t.Errorf("parked poll answered %d", st)
		}
	}
	t.Run("slots are given back", func(t *testing.T) {
		f.waitWaiters(t, 0)
		go func() { st, _ := f.call("GET", "/v1/revocations?after=0&waitSeconds=1", "", nil); done <- st }()
		if st := <-done; st != 200 {
			t.Fatalf("after the parked polls ended: %d", st)
		}
	})
}

// TestRevocationFeedQueryAttacks: after and waitSeconds as an attacker
// spells them. A huge waitSeconds is MaxWait (it overflowed to a negative
// wait and answered at once); a malformed one is refused without echoing it.
func TestRevocationFeedQueryAttacks(t *testing.T) {
	f := handlerFixture(t)
	sid, _ := f.session()
	for _, q := range []string{"after=-1", "after=1e3", "after=0x10", "after=99999999999999999999",
		"waitSeconds=-1", "waitSeconds=abc", "waitSeconds=1.5", "waitSeconds=%3Cscript%3E", "after=%27%20OR%201=1--"} {
		t.Run(q, func(t *testing.T) {
			code, b := httpcheck.Get(t, f.url+"/v1/revocations?"+q)
			if code != 400 || !strings.Contains(b, "DELEGATION_REQUEST_INVALID") {
				t.Fatalf("%d %s", code, b)
			}
			for _, echo := range []string{"script", "OR 1", "abc", "0x10", "99999"} {
				if strings.Contains(b, echo) {
					t.Errorf("error body echoes the input: %s", b)
				}
			}
		})
	}
	t.Run("huge waitSeconds waits", func(t *testing.T) {
		done := make(chan map[string]any)
		go func() {
			_, b := f.call("GET", "/v1/revocations?after=0&waitSeconds=9223372036854775807", "", nil)
			done <- b
		}()
		f.waitWaiters(t, 1)
		if st, b := f.call("POST", "/v1/sessions/"+sid+"/revoke", opKey, nil); st != 200 {
			t.Fatalf("revoke: %d %v", st, b)
		}
		b := <-done
		if rv, _ := b["revoked"].([]any); len(rv) != 1 {
			t.Fatalf("the long-poll answered %v before the revocation", b)
		}
	})
}

// TestBodiesAmbiguousKeys: a body whose meaning depends on the parser is
// refused. encoding/json lets the last of two equal keys win and matches
// field names case-insensitively (even "ſ" for "s"), while other readers
// of the same bytes (a page's JSON.parse, a first-wins parser) see
// another value; so a key given twice, anywhere, and a field name not
// spelled exactly are refused, and a task's status is read by its exact
// name, as every client reads it.
func TestBodiesAmbiguousKeys(t *testing.T) {
	f := newTaskFixture(t, nil)
	createBody := func(extra string) string {
		return `{"audience":"` + origin + `","scope":["orders.read"],"ttlSeconds":60,"agent":"a"` + extra + `}`
	}
	st, b := f.call("POST", "/v1/delegations", "", createBody(""))
	if st != 201 {
		t.Fatalf("create: %d %v", st, b)
	}
	id, secret := b["id"].(string), b["pollSecret"].(string)
	f.call("POST", "/v1/delegations/"+id+"/approve", opKey, map[string]any{"subject": "alice"})
	tok := f.tokenFor("agent-dup")
	taskID := f.newTask(tok, "dup-task", map[string]any{"status": "running"})
	lease := f.lease(tok, taskID, "h")
	for _, tc := range []struct{ name, method, path, auth, body string }{
		{"duplicate audience", "POST", "/v1/delegations", "", createBody(`,"audience":"https://evil.example"`)},
		{"case-variant field", "POST", "/v1/delegations", "", createBody(`,"Agent":"other"`)},
		{"duplicate nested key", "POST", "/v1/delegations/" + id + "/approve", opKey, `{"scope":["orders.read"],"subject":"x","subject":"y"}`},
		{"case-variant poll secret", "POST", "/v1/delegations/" + id + "/token", "", `{"pollSecret":"wrong","PollSecret":"` + secret + `"}`},
		{"long-s poll secret", "POST", "/v1/delegations/" + id + "/token", "", `{"pollSecret":"wrong","pollſecret":"` + secret + `"}`},
		{"escaped duplicate", "POST", "/v1/delegations/" + id + "/token", "", `{"pollSecret":"wrong","poll\\u0053ecret":"` + secret + `"}`},
		{"duplicate in state", "PUT", "/v1/tasks/" + taskID, tok, `{"leaseId":"` + lease + `","state":{"status":"running","status":"done"}}`},
		{"deep duplicate in state", "PUT", "/v1/tasks/" + taskID, tok, `{"leaseId":"` + lease + `","state":{"a":[{"b":{"c":1,"c":2}}]}}`},
		{"duplicate leaseId", "PUT", "/v1/tasks/" + taskID, tok, `{"leaseId":"lother","leaseId":"` + lease + `","state":{}}`},
		{"duplicate holder", "POST", "/v1/tasks/" + taskID + "/lease", tok, `{"holder":"a","holder":"b","ttlSeconds":5}`},
		{"duplicate ok", "PUT", "/v1/sessions/s/requests/r1/complete", tok, `{"ok":false,"ok":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(tc.method, tc.path, tc.auth, ifMatch(1), tc.body)
			// The namespace's refusal of a malformed body: 400
			// DELEGATION_REQUEST_INVALID, or CONTINUITY_INVALID_STATE (409)
			// on the task routes.
			want, wantCode := 400, "DELEGATION_REQUEST_INVALID"
			if strings.HasPrefix(tc.path, "/v1/tasks") {
				want, wantCode = 409, "CONTINUITY_INVALID_STATE"
			}
			if r.Status != want || code(r.Body) != wantCode || !strings.Contains(string(r.Raw), "not the expected JSON object") {
				t.Fatalf("status %d %s, want %d %s for a malformed body", r.Status, r.Raw, want, wantCode)
			}
			if strings.Contains(string(r.Raw), secret) || strings.Contains(string(r.Raw), "evil") {
				t.Errorf("error body echoes the input: %s", r.Raw)
			}
		})
	}
	t.Run("status is read by its exact name", func(t *testing.T) {
		// JSON.parse(state).status is "done": the task is terminal for the
		// authority too, whatever a "Status" beside it says.
		r := f.do("PUT", "/v1/tasks/"+taskID, tok, ifMatch(1), `{"leaseId":"`+lease+`","state":{"status":"done","Status":"running"}}`)
		if r.Status != 200 {
			t.Fatalf("write: %d %s", r.Status, r.Raw)
		}
		g := f.do("GET", "/v1/tasks/"+taskID, tok, nil, nil)
		if g.Body["terminal"] != true {
			t.Fatalf("terminal = %v for %s", g.Body["terminal"], g.Raw)
		}
	})
}

// TestHTTPServerHeaderCap: pling authority's http.Server refuses a
// request whose headers are past 32 KiB (431) instead of reading up to
// net/http's 1 MiB default of each connection; a Bearer of that size is no
// credential anyway.
func TestHTTPServerHeaderCap(t *testing.T) {
	f := handlerFixture(t)
	hs := httpserver.Authority(f.srv.Handler())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	for _, tc := range []struct {
		name string
		size int
		want int
	}{{"small", 1 << 10, 200}, {"64 KiB", 64 << 10, http.StatusRequestHeaderFieldsTooLarge}} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/healthz", nil)
			req.Header.Set("X-Pad", strings.Repeat("a", tc.size))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
}

// TestCreateRateLimitIPv6Prefix: an IPv6 client is limited by its /64,
// the least a host is given, not by each address: one host could
// otherwise take a fresh address per request, never meet the limit, and
// fill the limiter's bound of buckets, after which every new client is
// refused. IPv4 addresses stay one bucket each.
func TestCreateRateLimitIPv6Prefix(t *testing.T) {
	f := handlerFixture(t, func(c *authority.Config) { c.CreateBurst, c.CreatePerSecond = 2, 0.001 })
	body := `{"audience":"` + origin + `","scope":["orders.read"],"ttlSeconds":600,"agent":"a"}`
	post := func(remote string) int {
		req := httptest.NewRequest("POST", "/v1/delegations", strings.NewReader(body))
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, req)
		return rec.Code
	}
	for i, tc := range []struct {
		remote string
		want   int
	}{
		{"[2001:db8:1:2::1]:1000", 201},
		{"[2001:db8:1:2::2]:1000", 201},
		{"[2001:db8:1:2:ffff::3]:1000", 429}, // same /64: its bucket is spent
		{"[2001:db8:1:3::1]:1000", 201},      // another /64
		{"192.0.2.1:1000", 201},
		{"192.0.2.1:1001", 201},
		{"192.0.2.1:1002", 429},
		{"192.0.2.2:1000", 201},
	} {
		if got := post(tc.remote); got != tc.want {
			t.Errorf("%d: from %s: %d, want %d", i, tc.remote, got, tc.want)
		}
	}
}

// TestRevokeTellsNothingWithoutCredential: POST /v1/sessions/{id}/revoke
// without an operator key or the session's token answers 401 whether the
// session exists or not (it said 404 for an unknown one, so anyone could
// test ids), as the shared replay guard's routes do; an operator still
// learns that an id is unknown.
func TestRevokeTellsNothingWithoutCredential(t *testing.T) {
	f := handlerFixture(t)
	sid, _ := f.session()
	for _, tc := range []struct {
		name, id, auth string
		want           int
		wantCode       string
	}{
		{"unknown id, no credential", "nosuchsession", "", 401, "DELEGATION_CREDENTIAL_INVALID"},
		{"unknown id, a wrong bearer", "nosuchsession", "pl1.x.y.z", 401, "DELEGATION_CREDENTIAL_INVALID"},
		{"known id, no credential", sid, "", 401, "DELEGATION_CREDENTIAL_INVALID"},
		{"unknown id, operator", "nosuchsession", opKey, 404, "DELEGATION_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := f.call("POST", "/v1/sessions/"+tc.id+"/revoke", tc.auth, nil)
			if st != tc.want || code(b) != tc.wantCode {
				t.Fatalf("%d %v, want %d %s", st, b, tc.want, tc.wantCode)
			}
		})
	}
}

// TestAudiencesMustBeOrigins: an audience is a page origin exactly as a
// browser sends it in Origin and location.origin. "null" (what any
// sandboxed frame of any site sends) would let every site's frames through
// the CORS of the page routes; a path, a capital letter or a default port
// never matches a page, so the authority would run and refuse everyone.
// NewServer refuses them at start.
func TestAudiencesMustBeOrigins(t *testing.T) {
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"https://shop.example", true},
		{"http://127.0.0.1:8080", true},
		{"http://[::1]:8080", true},
		{"null", false},
		{"*", false},
		{"", false},
		{"https://shop.example/", false},
		{"https://shop.example/app", false},
		{"https://Shop.example", false},
		{"https://shop.example:443", false},
		{"http://shop.example:80", false},
		{"https://user@shop.example", false},
		{"https://shop.example?x", false},
		{"file:///tmp", false},
		{"shop.example", false},
	} {
		t.Run(tc.origin, func(t *testing.T) {
			st := openSQLite(t)
			_, err := authority.NewServer(context.Background(), authority.Config{Store: st,
				Audiences: map[string][]string{tc.origin: {"*"}}})
			if (err == nil) != tc.ok {
				t.Fatalf("NewServer: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
