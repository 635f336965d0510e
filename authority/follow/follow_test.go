package follow_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/authority/follow"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/runtime"
)

const (
	origin = "https://shop.example"
	opKey  = "operator-key-for-tests"
)

// authorityFixture is a real authority.Server on a loopback listener that
// a test can stop and start again on the same address and store.
type authorityFixture struct {
	t     *testing.T
	store authority.SQLStore
	srv   *authority.Server
	addr  string
	hs    *http.Server
}

func newAuthority(t *testing.T) *authorityFixture {
	t.Helper()
	st, _ := authoritytest.SQLite(t)
	a := &authorityFixture{t: t, store: st}
	var err error
	a.srv, err = authority.NewServer(context.Background(), authority.Config{Store: st,
		Audiences: map[string][]string{origin: {"*"}}, OperatorKeys: []string{opKey}, MaxWait: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a.start("127.0.0.1:0")
	t.Cleanup(a.stop)
	return a
}

func (a *authorityFixture) start(addr string) {
	a.t.Helper()
	var l net.Listener
	var err error
	for range 50 { // the old socket of the same address may linger a moment
		if l, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		a.t.Fatal(err)
	}
	a.addr = l.Addr().String()
	a.hs = &http.Server{Handler: a.srv}
	go a.hs.Serve(l)
}

func (a *authorityFixture) stop() {
	if a.hs != nil {
		a.hs.Close()
		a.hs = nil
	}
}

func (a *authorityFixture) url() string { return "http://" + a.addr }

func (a *authorityFixture) call(method, path, bearer string, body any) (int, map[string]any) {
	a.t.Helper()
	r, err := authoritytest.Do(context.Background(), http.DefaultClient, a.url(), method, path, bearer, nil, body)
	if err != nil {
		a.t.Fatal(err)
	}
	return r.Status, r.Body
}

// mint gets a token through the device grant over HTTP: create, approve
// with the operator key, collect.
func (a *authorityFixture) mint() (sessionID, token string) {
	a.t.Helper()
	return a.mintTTL(600 * time.Second)
}

// mintTTL is mint with a token lifetime of ttl.
func (a *authorityFixture) mintTTL(ttl time.Duration) (sessionID, token string) {
	a.t.Helper()
	st, b := a.call("POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": []string{"*"}, "ttlSeconds": int(ttl / time.Second), "agent": "agent-1"})
	if st != 201 {
		a.t.Fatalf("create: %d %v", st, b)
	}
	id, secret := b["id"].(string), b["pollSecret"].(string)
	if st, b := a.call("POST", "/v1/delegations/"+id+"/approve", opKey, map[string]any{"subject": "alice"}); st != 200 {
		a.t.Fatalf("approve: %d %v", st, b)
	}
	st, b = a.call("POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
	if st != 200 {
		a.t.Fatalf("collect: %d %v", st, b)
	}
	return b["sessionId"].(string), b["token"].(string)
}

// countingTransport is the real net/http transport, counting key fetches.
type countingTransport struct {
	follow.HTTPTransport
	keyFetches atomic.Int32
}

func (c *countingTransport) Do(ctx context.Context, method, url, bearer string, body []byte) (int, []byte, error) {
	if strings.HasSuffix(url, "/v1/keys") {
		c.keyFetches.Add(1)
	}
	return c.HTTPTransport.Do(ctx, method, url, bearer, body)
}

// page is a runtime that follows the authority, with a write action and a
// read action.
type page struct {
	rt   *runtime.Runtime
	f    *follow.Follower
	runs atomic.Int32
}

// newPage starts a page on clock (nil: the wall clock) following a.
func newPage(t *testing.T, a *authorityFixture, clock runtime.Clock, opts ...follow.Option) *page {
	t.Helper()
	return newPageWith(t, a, clock, nil, opts...)
}

// newPageWith is newPage with more runtime options, some of which want
// the follower (with).
func newPageWith(t *testing.T, a *authorityFixture, clock runtime.Clock, with func(*follow.Follower) []runtime.Option, opts ...follow.Option) *page {
	t.Helper()
	opts = append([]follow.Option{follow.WithWait(1)}, opts...)
	if clock != nil {
		opts = append(opts, follow.WithClock(clock))
	}
	f, err := follow.New(a.url(), origin, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	p := &page{f: f}
	ropts := []runtime.Option{runtime.WithExpose("*"), runtime.WithOrigin(origin), runtime.WithSessions(f, false), runtime.WithAnonymous("order.view"),
		runtime.WithSharedReplayGuard(f.ReplayGuard(nil))}
	if clock != nil {
		ropts = append(ropts, runtime.WithClock(clock))
	}
	if with != nil {
		ropts = append(ropts, with(f)...)
	}
	p.rt = runtime.New(ropts...)
	if _, err := p.rt.DeclareAction(runtime.Action{ID: "order.place", Title: "Place", Risk: "write",
		Run: func(context.Context, *runtime.Call) (any, error) { p.runs.Add(1); return "placed", nil }}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.rt.DeclareAction(runtime.Action{ID: "order.view", Title: "View", Risk: "read",
		Run: func(context.Context, *runtime.Call) (any, error) { return "seen", nil }}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the follower did not sync with the authority")
	}
	return p
}

// invoke sends an invoke and returns its ok and code.
func (p *page) invoke(t *testing.T, id, capability, token string) (bool, string, map[string]any) {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"protocol": "pling.surface/0.1", "id": id, "method": "invoke",
		"capability": capability, "input": map[string]any{}, "session": token})
	var res struct {
		OK    bool `json:"ok"`
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(p.rt.Handle(context.Background(), req), &res); err != nil {
		t.Fatal(err)
	}
	return res.OK, res.Error.Code, res.Error.Details
}

// TestRevokedWithinBound: a session the operator revokes is refused with
// SESSION_REVOKED by a runtime that follows the authority within 5 s.
func TestRevokedWithinBound(t *testing.T) {
	a := newAuthority(t)
	p := newPage(t, a, nil)
	sid, tok := a.mint()
	if ok, code, _ := p.invoke(t, "r1", "order.view", tok); !ok {
		t.Fatalf("before revocation: %s", code)
	}
	if st, b := a.call("POST", "/v1/sessions/"+sid+"/revoke", opKey, nil); st != 200 {
		t.Fatalf("revoke: %d %v", st, b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; ; i++ {
		_, code, _ := p.invoke(t, "r2-"+strconv.Itoa(i), "order.view", tok)
		if code == "SESSION_REVOKED" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %q 5 s after the revocation", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUnknownKidRefetch: a token signed by a key the page has not seen
// (after a rotation) makes the follower fetch the keys again, once per
// bound; a forged kid does not make it fetch again within the bound.
func TestUnknownKidRefetch(t *testing.T) {
	a := newAuthority(t)
	clock := runtime.NewFakeClock(time.Now().UnixMilli())
	tr := &countingTransport{}
	p := newPage(t, a, clock, follow.WithTransport(tr))
	if err := a.srv.Rotate(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, tok := a.mint() // signed by the new key
	before := tr.keyFetches.Load()
	clock.Advance(follow.KeyRefetchMs)
	if ok, code, _ := p.invoke(t, "r1", "order.view", tok); !ok {
		t.Fatalf("token of the rotated-in key: %s", code)
	}
	if got := tr.keyFetches.Load() - before; got != 1 {
		t.Errorf("key fetches for the new kid: %d, want 1", got)
	}
	forged := "pl1.kforged." + strings.SplitN(tok, ".", 4)[2] + "." + strings.SplitN(tok, ".", 4)[3]
	for i, id := range []string{"f1", "f2", "f3"} {
		if ok, code, _ := p.invoke(t, id, "order.view", forged); ok || code != "SESSION_INVALID" {
			t.Errorf("forged kid %d: ok=%v code=%q, want SESSION_INVALID", i, ok, code)
		}
	}
	if got := tr.keyFetches.Load() - before; got != 1 {
		t.Errorf("key fetches after forged kids within the bound: %d, want still 1", got)
	}
}

// TestFeedDownFailsClosed: while the feed's last answer is within the
// freshness bound a delegated session is served; past it, with the
// authority down, it is refused with SESSION_INVALID, and anonymous
// requests are served as before.
func TestFeedDownFailsClosed(t *testing.T) {
	a := newAuthority(t)
	clock := runtime.NewFakeClock(time.Now().UnixMilli())
	p := newPage(t, a, clock)
	_, tok := a.mint()
	if ok, code, _ := p.invoke(t, "r1", "order.view", tok); !ok {
		t.Fatalf("feed current: %s", code)
	}
	a.stop()
	clock.Advance(1000 + follow.DefaultFreshGraceMs + 1)
	got := []string{}
	for _, tc := range []struct{ id, token string }{{"r2", tok}, {"r3", ""}} {
		req := map[string]any{"protocol": "pling.surface/0.1", "id": tc.id, "method": "invoke", "capability": "order.view", "input": map[string]any{}}
		if tc.token != "" {
			req["session"] = tc.token
		}
		b, _ := json.Marshal(req)
		var res struct {
			OK    bool                  `json:"ok"`
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(p.rt.Handle(context.Background(), b), &res)
		got = append(got, res.Error.Code)
	}
	if diff := cmp.Diff([]string{"SESSION_INVALID", ""}, got); diff != "" {
		t.Errorf("delegated, anonymous codes with the feed stale (-want +got)\n%s", diff)
	}
}

// TestSharedGuardAcrossRuntimes: two runtimes (two tabs or hosts) that
// follow one authority run a write request id once between them; read
// invokes are not recorded in the authority.
func TestSharedGuardAcrossRuntimes(t *testing.T) {
	a := newAuthority(t)
	tab1, tab2 := newPage(t, a, nil), newPage(t, a, nil)
	_, tok := a.mint()
	type out struct {
		OK      bool
		Code    string
		Details map[string]any
	}
	var got []out
	for _, c := range []struct {
		p        *page
		id, capa string
	}{
		{tab1, "w1", "order.place"},
		{tab2, "w1", "order.place"},
		{tab1, "v1", "order.view"},
		{tab2, "v1", "order.view"},
	} {
		ok, code, d := c.p.invoke(t, c.id, c.capa, tok)
		got = append(got, out{ok, code, d})
	}
	want := []out{{OK: true}, {Code: "REPLAY_DETECTED", Details: map[string]any{"previous": map[string]any{"completed": true, "ok": true}}},
		{OK: true}, {OK: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if n := tab1.runs.Load() + tab2.runs.Load(); n != 1 {
		t.Errorf("the write ran %d times, want 1", n)
	}
}

// TestAuthorityUnreachable: a write invoke whose id cannot be consumed in
// the authority is REPLAY_GUARD_UNAVAILABLE and runs nothing; the id stays
// free, so once the authority is back the same id runs.
func TestAuthorityUnreachable(t *testing.T) {
	a := newAuthority(t)
	p := newPage(t, a, nil)
	_, tok := a.mint()
	addr := a.addr
	a.stop()
	if ok, code, _ := p.invoke(t, "w1", "order.place", tok); ok || code != "REPLAY_GUARD_UNAVAILABLE" {
		t.Fatalf("authority down: ok=%v code=%q, want REPLAY_GUARD_UNAVAILABLE", ok, code)
	}
	if p.runs.Load() != 0 {
		t.Fatal("the write ran without its id consumed")
	}
	a.start(addr)
	if ok, code, _ := p.invoke(t, "w1", "order.place", tok); !ok {
		t.Fatalf("authority back, same id: %s", code)
	}
	if ok, code, _ := p.invoke(t, "w1", "order.place", tok); ok || code != "REPLAY_DETECTED" {
		t.Fatalf("third send: ok=%v code=%q, want REPLAY_DETECTED", ok, code)
	}
}
