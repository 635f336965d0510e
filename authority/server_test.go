package authority_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/internal/testing/hammer"
	"github.com/pling-go/pling/runtime"
)

const (
	origin = "https://shop.example"
	opKey  = "operator-key-for-tests"
)

type fixture struct {
	t     *testing.T
	url   string
	srv   *authority.Server
	clock *atomic.Int64 // unix ms
	store authority.Store
}

func newFixture(t *testing.T, st authority.Store, mods ...func(*authority.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	clock := new(atomic.Int64)
	clock.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli())
	cfg := authority.Config{
		Store:           st,
		Audiences:       map[string][]string{origin: {"orders.*", "cart.view"}},
		OperatorKeys:    []string{opKey},
		VerificationURI: "https://shop.example/consent",
		Interval:        2 * time.Second,
		MaxBodyBytes:    1024,
		MaxWait:         3 * time.Second,
		Now:             func() time.Time { return time.UnixMilli(clock.Load()) },
	}
	for _, m := range mods {
		m(&cfg)
	}
	srv, err := authority.NewServer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &fixture{t: t, url: hs.URL, srv: srv, clock: clock, store: st}
}

func (f *fixture) advance(d time.Duration) { f.clock.Add(d.Milliseconds()) }

// call sends a request and returns the status and the decoded body.
func (f *fixture) call(method, path, auth string, body any) (int, map[string]any) {
	f.t.Helper()
	return f.callAt(nil, method, path, auth, body)
}

// requestBody is a test request's body: none for nil, a string as it is
// (malformed JSON too), anything else as JSON.
func requestBody(body any) io.Reader {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		return bytes.NewReader(j)
	}
}

// fromAddress is a client whose connections leave from the loopback
// address ip (127.0.0.2, 127.0.0.3, …: other clients of one machine, for
// the bounds the authority keeps per client address).
func fromAddress(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// burstClient keeps enough connections alive for a burst of requests.
var burstClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// callAt is call sent when start is closed (nil: at once), on connections
// kept alive, so that a burst of calls really overlaps.
func (f *fixture) callAt(start <-chan struct{}, method, path, auth string, body any) (int, map[string]any) {
	f.t.Helper()
	client := http.DefaultClient
	if start != nil {
		client = burstClient
	}
	r := send(f.t, client, start, method, f.url+path, auth, nil, body)
	return r.Status, r.Body
}

// resp is an answer of the authority's HTTP map.
type resp = authoritytest.Answer

// send sends method url on client when start is closed (nil: at once),
// with a bearer auth (none when empty), the headers hdr and body (see
// requestBody). A request that gets no answer is a test error and status
// 0, so that the goroutines of a burst may send too. Every request the
// authority's tests make over HTTP goes through it.
func send(t *testing.T, client *http.Client, start <-chan struct{}, method, url, auth string, hdr map[string]string, body any) resp {
	t.Helper()
	req, err := authoritytest.NewRequest(context.Background(), method, url, auth, hdr, requestBody(body))
	if err != nil {
		t.Error(err)
		return resp{}
	}
	if start != nil {
		<-start
	}
	a, err := authoritytest.Send(client, req)
	if err != nil {
		t.Error(err)
		return resp{}
	}
	return a
}

func code(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (f *fixture) create(scope ...string) (id, secret string) {
	f.t.Helper()
	st, b := f.call("POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": scope, "ttlSeconds": 600, "agent": "agent-1"})
	if st != 201 {
		f.t.Fatalf("create: %d %v", st, b)
	}
	return b["id"].(string), b["pollSecret"].(string)
}

func (f *fixture) verifier(audience string) *runtime.TokenVerifier {
	f.t.Helper()
	_, b := f.call("GET", "/v1/keys", "", nil)
	keys := map[string]ed25519.PublicKey{}
	for _, k := range b["keys"].([]any) {
		m := k.(map[string]any)
		pk, _ := base64.RawURLEncoding.DecodeString(m["publicKey"].(string))
		keys[m["kid"].(string)] = pk
	}
	v, err := runtime.NewTokenVerifier(keys, audience, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func TestDeviceGrantFlow(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		st, b := f.call("POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": []string{"orders.*", "cart.view"}, "ttlSeconds": 600, "agent": "agent-1"})
		if st != 201 {
			t.Fatalf("create: %d %v", st, b)
		}
		for _, k := range []string{"id", "userCode", "verificationUri", "pollSecret", "expiresAt"} {
			if s, _ := b[k].(string); s == "" {
				t.Errorf("create: %s missing in %v", k, b)
			}
		}
		if b["intervalSeconds"] != float64(2) {
			t.Errorf("intervalSeconds = %v, want 2", b["intervalSeconds"])
		}
		id, secret := b["id"].(string), b["pollSecret"].(string)

		st, b = f.call("POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
		if st != 202 || b["status"] != "pending" {
			t.Fatalf("first poll: %d %v", st, b)
		}
		st, b = f.call("POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
		if st != 202 || b["status"] != "slow_down" {
			t.Fatalf("fast poll: %d %v, want 202 slow_down", st, b)
		}
		f.advance(3 * time.Second)

		st, b = f.call("GET", "/v1/delegations/"+id, opKey, nil)
		if diff := cmp.Diff(map[string]any{"id": id, "audience": origin, "scope": []any{"orders.*", "cart.view"},
			"agent": "agent-1", "status": "pending", "expiresAt": b["expiresAt"]}, b); st != 200 || diff != "" {
			t.Fatalf("consent view: %d (-want +got)\n%s", st, diff)
		}
		st, b = f.call("POST", "/v1/delegations/"+id+"/approve", opKey, map[string]any{"subject": "alice", "scope": []string{"orders.read"}})
		if st != 200 || b["status"] != "approved" {
			t.Fatalf("approve: %d %v", st, b)
		}
		st, b = f.call("POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
		if st != 200 {
			t.Fatalf("collect: %d %v", st, b)
		}
		tok, sid := b["token"].(string), b["sessionId"].(string)
		ss, err := f.verifier(origin).Verify(context.Background(), tok, f.clock.Load())
		if err != nil {
			t.Fatalf("token does not verify for its audience: %v", err)
		}
		if diff := cmp.Diff([]string{"orders.read"}, ss.Scope); diff != "" {
			t.Errorf("token scope (-want +got)\n%s", diff)
		}
		if _, err := f.verifier("https://other.example").Verify(context.Background(), tok, f.clock.Load()); err == nil {
			t.Error("token verifies for another audience")
		}
		// The poll secret is spent: a replay gets nothing and changes nothing.
		st, b = f.call("POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
		if st != 401 || code(b) != "DELEGATION_CREDENTIAL_INVALID" {
			t.Fatalf("replayed poll: %d %v", st, b)
		}
		// The agent revokes its own session with its token.
		if st, b = f.call("POST", "/v1/sessions/"+sid+"/revoke", "not-the-token", nil); st != 401 {
			t.Fatalf("revoke with a wrong bearer: %d %v", st, b)
		}
		if st, b = f.call("POST", "/v1/sessions/"+sid+"/revoke", tok, nil); st != 200 {
			t.Fatalf("revoke by agent: %d %v", st, b)
		}
		st, b = f.call("GET", "/v1/revocations?after=0", "", nil)
		if st != 200 || len(b["revoked"].([]any)) != 1 || b["revoked"].([]any)[0].(map[string]any)["sessionId"] != sid {
			t.Fatalf("feed: %d %v", st, b)
		}
	})
}

func TestDelegationCodes(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		valid := func() map[string]any {
			return map[string]any{"audience": origin, "scope": []string{"orders.read"}, "ttlSeconds": 60, "agent": "a"}
		}
		with := func(k string, v any) map[string]any { m := valid(); m[k] = v; return m }
		deniedID, deniedSecret := f.create("orders.read")
		f.call("POST", "/v1/delegations/"+deniedID+"/deny", opKey, nil)
		wideID, wideSecret := f.create("*")
		f.call("POST", "/v1/delegations/"+wideID+"/approve", opKey, map[string]any{"subject": "alice"})
		expID, expSecret := f.create("orders.read")
		okID, _ := f.create("orders.read")

		type tc struct {
			name, method, path, auth string
			body                     any
			status                   int
			code                     string
			before                   func()
		}
		cases := []tc{
			{name: "unknown field", method: "POST", path: "/v1/delegations", body: with("extra", 1), status: 400, code: "DELEGATION_REQUEST_INVALID"},
			{name: "wrong type", method: "POST", path: "/v1/delegations", body: with("ttlSeconds", "60"), status: 400, code: "DELEGATION_REQUEST_INVALID"},
			{name: "trailing data", method: "POST", path: "/v1/delegations", body: `{"audience":"x"} {}`, status: 400, code: "DELEGATION_REQUEST_INVALID"},
			{name: "oversized body", method: "POST", path: "/v1/delegations", body: `{"agent":"` + strings.Repeat("a", 4096) + `"}`, status: 413, code: "DELEGATION_REQUEST_INVALID"},
			{name: "empty scope", method: "POST", path: "/v1/delegations", body: with("scope", []string{}), status: 400, code: "DELEGATION_REQUEST_INVALID"},
			{name: "malformed pattern", method: "POST", path: "/v1/delegations", body: with("scope", []string{"a b"}), status: 400, code: "DELEGATION_REQUEST_INVALID"},
			{name: "ttl too long", method: "POST", path: "/v1/delegations", body: with("ttlSeconds", 999999), status: 400, code: "DELEGATION_REQUEST_INVALID"},
			{name: "unknown audience", method: "POST", path: "/v1/delegations", body: with("audience", "https://evil.example"), status: 403, code: "DELEGATION_BINDING_MISMATCH"},
			{name: "no operator key", method: "GET", path: "/v1/delegations/" + okID, status: 401, code: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "wrong operator key", method: "GET", path: "/v1/delegations/" + okID, auth: "nope", status: 401, code: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "unknown delegation", method: "GET", path: "/v1/delegations/nope", auth: opKey, status: 404, code: "DELEGATION_NOT_FOUND"},
			{name: "approve wider than asked", method: "POST", path: "/v1/delegations/" + okID + "/approve", auth: opKey, body: map[string]any{"subject": "alice", "scope": []string{"orders.*"}}, status: 400, code: "DELEGATION_REQUEST_INVALID"},
			{name: "wrong poll secret", method: "POST", path: "/v1/delegations/" + okID + "/token", body: map[string]any{"pollSecret": "guess"}, status: 401, code: "DELEGATION_CREDENTIAL_INVALID"},
			{name: "denied", method: "POST", path: "/v1/delegations/" + deniedID + "/token", body: map[string]any{"pollSecret": deniedSecret}, status: 410, code: "DELEGATION_REVOKED"},
			{name: "approve after deny", method: "POST", path: "/v1/delegations/" + deniedID + "/approve", auth: opKey, body: map[string]any{"subject": "alice"}, status: 410, code: "DELEGATION_REVOKED"},
			{name: "wider than audience", method: "POST", path: "/v1/delegations/" + wideID + "/token", body: map[string]any{"pollSecret": wideSecret}, status: 403, code: "DELEGATION_BINDING_MISMATCH"},
			{name: "unknown session revoke", method: "POST", path: "/v1/sessions/nope/revoke", auth: opKey, status: 404, code: "DELEGATION_NOT_FOUND"},
			{name: "bad cursor", method: "GET", path: "/v1/revocations?after=x", status: 400, code: "DELEGATION_REQUEST_INVALID"},
			{name: "expired", method: "POST", path: "/v1/delegations/" + expID + "/token", body: map[string]any{"pollSecret": expSecret}, status: 410, code: "DELEGATION_EXPIRED",
				before: func() { f.advance(11 * time.Minute) }},
			{name: "approve expired", method: "POST", path: "/v1/delegations/" + expID + "/approve", auth: opKey, body: map[string]any{"subject": "alice"}, status: 410, code: "DELEGATION_EXPIRED"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if c.before != nil {
					c.before()
				}
				st, b := f.call(c.method, c.path, c.auth, c.body)
				if diff := cmp.Diff([2]any{c.status, c.code}, [2]any{st, code(b)}); diff != "" {
					t.Errorf("(-want +got)\n%s\nbody %v", diff, b)
				}
			})
		}
		// Nothing the refusals did changed the delegations.
		for _, id := range []string{okID, deniedID} {
			_, b := f.call("GET", "/v1/delegations/"+id, opKey, nil)
			want := map[string]string{okID: "expired", deniedID: "denied"}[id]
			if b["status"] != want {
				t.Errorf("%s: status %v, want %s", id, b["status"], want)
			}
		}
	})
}

func TestCollectExactlyOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		id, secret := f.create("orders.read")
		f.call("POST", "/v1/delegations/"+id+"/approve", opKey, map[string]any{"subject": "alice"})
		// Warm the connections (HTTP and the store's pool) first.
		hammer.Run(32, func(int) { f.callAt(closed, "GET", "/v1/delegations/"+id, opKey, nil) })
		var got, refused atomic.Int32
		hammer.Run(32, func(int) {
			st, b := f.callAt(closed, "POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
			switch {
			case st == 200:
				got.Add(1)
			case st == 401 && code(b) == "DELEGATION_CREDENTIAL_INVALID":
				refused.Add(1)
			default:
				t.Errorf("unexpected %d %v", st, b)
			}
		})
		if got.Load() != 1 || refused.Load() != 31 {
			t.Fatalf("collected %d times, refused %d, want 1 and 31", got.Load(), refused.Load())
		}
	})
}

// closed is a start channel that is open already.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (f *fixture) session() (sid, tok string) {
	id, secret := f.create("orders.read")
	f.call("POST", "/v1/delegations/"+id+"/approve", opKey, map[string]any{"subject": "alice"})
	_, b := f.call("POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
	return b["sessionId"].(string), b["token"].(string)
}

func TestRevocationFeedLongPoll(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		sid, _ := f.session()
		t.Run("returns within waitSeconds when nothing happens", func(t *testing.T) {
			start := time.Now()
			st, b := f.call("GET", "/v1/revocations?after=0&waitSeconds=1", "", nil)
			el := time.Since(start)
			if st != 200 || len(b["revoked"].([]any)) != 0 || b["cursor"] != "0" {
				t.Fatalf("%d %v", st, b)
			}
			if el < 900*time.Millisecond || el > 2500*time.Millisecond {
				t.Errorf("waited %v, want about 1s", el)
			}
		})
		t.Run("capped by MaxWait", func(t *testing.T) {
			start := time.Now()
			f.call("GET", "/v1/revocations?after=0&waitSeconds=3600", "", nil)
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("waited %v, want at most MaxWait (3s)", el)
			}
		})
		t.Run("returns promptly on a revocation", func(t *testing.T) {
			done := make(chan map[string]any)
			start := time.Now()
			go func() { _, b := f.call("GET", "/v1/revocations?after=0&waitSeconds=3", "", nil); done <- b }()
			time.Sleep(200 * time.Millisecond)
			if st, b := f.call("POST", "/v1/sessions/"+sid+"/revoke", opKey, nil); st != 200 {
				t.Errorf("revoke: %d %v", st, b)
			}
			b := <-done
			if el := time.Since(start); el > 1500*time.Millisecond {
				t.Errorf("long-poll took %v after a revocation", el)
			}
			rv := b["revoked"].([]any)
			if len(rv) != 1 || rv[0].(map[string]any)["sessionId"] != sid {
				t.Fatalf("feed %v", b)
			}
			// After the cursor: nothing new; revoking again adds nothing.
			f.call("POST", "/v1/sessions/"+sid+"/revoke", opKey, nil)
			_, b = f.call("GET", "/v1/revocations?after="+b["cursor"].(string), "", nil)
			if len(b["revoked"].([]any)) != 0 {
				t.Errorf("after cursor: %v", b)
			}
		})
	})
}

func TestKeyRotationKeepsOldKeys(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		_, old := f.session()
		if err := f.srv.Rotate(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, b := f.call("GET", "/v1/keys", "", nil)
		if n := len(b["keys"].([]any)); n != 2 {
			t.Fatalf("%d keys published after rotation, want 2: %v", n, b)
		}
		_, fresh := f.session()
		if strings.Split(old, ".")[1] == strings.Split(fresh, ".")[1] {
			t.Error("rotation did not change the signing kid")
		}
		v := f.verifier(origin)
		for name, tok := range map[string]string{"old": old, "new": fresh} {
			if _, err := v.Verify(context.Background(), tok, f.clock.Load()); err != nil {
				t.Errorf("%s token: %v", name, err)
			}
		}
		f.advance(61 * time.Minute) // past the old key's last token
		_, b = f.call("GET", "/v1/keys", "", nil)
		if n := len(b["keys"].([]any)); n != 1 {
			t.Errorf("%d keys published after the old key's tokens expired, want 1", n)
		}
	})
}

// A store opened again (a restart, or another instance) is migrated
// already and holds what the first wrote.
func TestStoreReopensMigrated(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		d := authority.Delegation{ID: "d1", UserCode: "ABCD-EFGH", PollSecretDigest: []byte{1, 2}, Audience: origin,
			Scope: []string{"orders.read"}, Agent: "a", TTLMs: 60000, CreatedMs: 1, ExpiresMs: 2}
		if err := open().CreateDelegation(ctx, d); err != nil {
			t.Fatal(err)
		}
		got, err := open().Delegation(ctx, "d1")
		if err != nil {
			t.Fatal(err)
		}
		d.Status = authority.StatusPending
		if diff := cmp.Diff(d, got); diff != "" {
			t.Errorf("reopened store (-want +got)\n%s", diff)
		}
	})
}
