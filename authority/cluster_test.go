package authority_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/httpserver"
	"github.com/pling-go/pling/internal/testing/pgtest"
)

// instance is one authority as pling authority runs it: its own store
// pool, Server, production handler and http.Server on a loopback port.
type instance struct {
	URL   string
	Srv   *authority.Server
	Store authority.Store
	hs    *http.Server
}

// cluster is several instances sharing one PostgreSQL database: the
// harness of the many-instance tests (collect, feed, and later leases).
type cluster struct {
	t      *testing.T
	DSN    string
	Inst   []*instance
	client *http.Client // keeps many connections per instance alive
}

// clusterConfig is the Config every instance of a cluster runs with (the
// store is filled in per instance).
func clusterConfig() authority.Config {
	return authority.Config{
		Audiences:       map[string][]string{origin: {"orders.*", "cart.view"}},
		OperatorKeys:    []string{opKey},
		VerificationURI: "https://shop.example/consent",
		MaxWait:         10 * time.Second,
	}
}

// newCluster starts n instances on a fresh database of the throwaway
// PostgreSQL, all at once (so they migrate and start concurrently, as a
// deployment's would), and stops them at the end of the test. opts change
// every instance's Config.
func newCluster(t *testing.T, n int, opts ...func(*authority.Config)) *cluster {
	t.Helper()
	c := &cluster{t: t, DSN: pgtest.DSN(t), Inst: make([]*instance, n),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Inst[i], errs[i] = startInstance(c.DSN, opts...)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		c.client.CloseIdleConnections()
		for _, in := range c.Inst {
			if in != nil {
				in.stop()
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func startInstance(dsn string, opts ...func(*authority.Config)) (*instance, error) {
	ctx := context.Background()
	st, err := authority.Open(ctx, authority.StoreSpec(dsn))
	if err != nil {
		return nil, err
	}
	cfg := clusterConfig()
	cfg.Store = st
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := authority.NewServer(ctx, cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		return nil, err
	}
	hs := httpserver.Authority(srv.Handler())
	go hs.Serve(ln)
	return &instance{URL: "http://" + ln.Addr().String(), Srv: srv, Store: st, hs: hs}, nil
}

func (in *instance) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	in.hs.Shutdown(ctx)
	in.Store.Close()
}

// call sends a request to instance i and returns the status and body.
func (c *cluster) call(i int, method, path, auth string, body any) (int, map[string]any) {
	c.t.Helper()
	return c.callAt(nil, i, method, path, auth, body)
}

// callAt is call, sent when start is closed (nil: at once), so that many
// calls can leave together.
func (c *cluster) callAt(start <-chan struct{}, i int, method, path, auth string, body any) (int, map[string]any) {
	c.t.Helper()
	r := send(c.t, c.client, start, method, c.Inst[i].URL+path, auth, nil, body)
	return r.Status, r.Body
}

// approved creates a delegation on instance i and approves it on the next.
func (c *cluster) approved(i int) (id, secret string) {
	c.t.Helper()
	st, b := c.call(i, "POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": []string{"orders.read"}, "ttlSeconds": 600, "agent": "agent-1"})
	if st != 201 {
		c.t.Fatalf("create: %d %v", st, b)
	}
	id, secret = b["id"].(string), b["pollSecret"].(string)
	if st, b = c.call((i+1)%len(c.Inst), "POST", "/v1/delegations/"+id+"/approve", opKey, map[string]any{"subject": "alice"}); st != 200 {
		c.t.Fatalf("approve: %d %v", st, b)
	}
	return id, secret
}

// warm opens k HTTP connections to each instance and k store connections
// in each instance's pool (k concurrent reads of delegation id), so that
// a burst that follows meets no connection set-up and really overlaps.
func (c *cluster) warm(k int, id string) {
	c.t.Helper()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range c.Inst {
		for range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.callAt(start, i, "GET", "/v1/delegations/"+id, opKey, nil)
			}()
		}
	}
	close(start)
	wg.Wait()
}

// One approved delegation, its token collected at once through three
// instances by many clients each: exactly one gets it.
func TestInstancesCollectExactlyOnce(t *testing.T) {
	c := newCluster(t, 3)
	id, secret := c.approved(0)
	const perInstance = 16
	c.warm(perInstance, id)
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	var token string
	for i := range c.Inst {
		for range perInstance {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, b := c.callAt(start, i, "POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
				mu.Lock()
				defer mu.Unlock()
				got[strings.TrimSpace(http.StatusText(st)+" "+code(b))]++
				if st == 200 {
					token = b["token"].(string)
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	want := map[string]int{"OK": 1, "Unauthorized DELEGATION_CREDENTIAL_INVALID": 3*perInstance - 1}
	if len(got) != len(want) || got["OK"] != 1 || got["Unauthorized DELEGATION_CREDENTIAL_INVALID"] != want["Unauthorized DELEGATION_CREDENTIAL_INVALID"] {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	// The one token verifies with the keys any instance publishes.
	for i := range c.Inst {
		f := &fixture{t: t, url: c.Inst[i].URL}
		if _, err := f.verifier(origin).Verify(context.Background(), token, time.Now().UnixMilli()); err != nil {
			t.Errorf("instance %d: the token does not verify: %v", i, err)
		}
	}
}

// A revocation made on instance A reaches a feed long-polled on C
// (docs/authority.md: within a second on another instance).
func TestInstancesRevocationFeed(t *testing.T) {
	c := newCluster(t, 3)
	id, secret := c.approved(0)
	st, b := c.call(1, "POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
	if st != 200 {
		t.Fatalf("collect: %d %v", st, b)
	}
	sid := b["sessionId"].(string)
	_, b = c.call(2, "GET", "/v1/revocations?after=0", "", nil)
	cursor := b["cursor"].(string)
	type result struct {
		st int
		b  map[string]any
		at time.Time
	}
	done := make(chan result, 1)
	go func() {
		st, b := c.call(2, "GET", "/v1/revocations?after="+cursor+"&waitSeconds=10", "", nil)
		done <- result{st, b, time.Now()}
	}()
	time.Sleep(300 * time.Millisecond) // let the long-poll begin waiting
	revoked := time.Now()
	if st, b := c.call(0, "POST", "/v1/sessions/"+sid+"/revoke", opKey, nil); st != 200 {
		t.Fatalf("revoke on A: %d %v", st, b)
	}
	select {
	case r := <-done:
		rv, _ := r.b["revoked"].([]any)
		if r.st != 200 || len(rv) != 1 || rv[0].(map[string]any)["sessionId"] != sid {
			t.Fatalf("feed on C: %d %v, want the session revoked on A", r.st, r.b)
		}
		t.Logf("seen on C %v after the revocation on A", r.at.Sub(revoked))
	case <-time.After(5 * time.Second):
		t.Fatal("the feed on C did not see the revocation on A within 5s")
	}
}

// /readyz answers for the store: 200 while PostgreSQL answers, 503 once it
// is gone (its own cluster here, stopped under the running instance).
func TestReadyzFollowsPostgres(t *testing.T) {
	pgtest.Shared(t) // skips without PostgreSQL
	pg, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	dsn, err := pg.NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	in, err := startInstance(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer in.stop()
	c := &cluster{t: t, Inst: []*instance{in}, client: http.DefaultClient}
	if st, b := c.call(0, "GET", "/readyz", "", nil); st != 200 {
		t.Fatalf("readyz with the store up: %d %v", st, b)
	}
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	if st, b := c.call(0, "GET", "/readyz", "", nil); st != 503 || b["status"] != "store unreachable" {
		t.Errorf("readyz with the store down: %d %v, want 503", st, b)
	}
	if st, _ := c.call(0, "GET", "/healthz", "", nil); st != 200 {
		t.Errorf("healthz with the store down: %d, want 200 (alive)", st)
	}
}
