package authority_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/httpserver"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// The helpers of the many-instance proofs (docs/authority.md "What the
// many-instance tests prove"): plain HTTP against a list of instance URLs,
// whichever store is behind them, so that one harness runs on three
// instances over PostgreSQL and on three over one SQLite file.

// hresp is one answer: status, headers, raw body and the body decoded.
type hresp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// hcall sends one request; an error is a transport error (no answer).
func hcall(ctx context.Context, cl *http.Client, url, method, path, tok string, hdr map[string]string, body any) (hresp, error) {
	a, err := authoritytest.Do(ctx, cl, url, method, path, tok, hdr, body)
	return hresp{a.Status, a.Header, a.Raw, a.Body}, err
}

// mustCall is hcall that fails the test unless the status is want.
func mustCall(t *testing.T, cl *http.Client, url, method, path, tok string, hdr map[string]string, body any, want int) hresp {
	t.Helper()
	r, err := hcall(context.Background(), cl, url, method, path, tok, hdr, body)
	if err != nil || r.status != want {
		t.Fatalf("%s %s: %d %s %v, want %d", method, path, r.status, r.raw, err, want)
	}
	return r
}

// grant runs the device grant across the instances (created on the first,
// approved on the second, collected on the last) and returns the
// session's token and id.
func grant(t *testing.T, cl *http.Client, urls []string) (token, sessionID string) {
	t.Helper()
	b := mustCall(t, cl, urls[0], "POST", "/v1/delegations", "", nil,
		map[string]any{"audience": origin, "scope": []string{"orders.read"}, "ttlSeconds": 3600, "agent": "agent-1"}, 201).body
	id, secret := b["id"].(string), b["pollSecret"].(string)
	mustCall(t, cl, urls[1%len(urls)], "POST", "/v1/delegations/"+id+"/approve", opKey, nil, map[string]any{"subject": "alice"}, 200)
	b = mustCall(t, cl, urls[len(urls)-1], "POST", "/v1/delegations/"+id+"/token", "", nil, map[string]any{"pollSecret": secret}, 200).body
	return b["token"].(string), b["sessionId"].(string)
}

// urls lists the cluster's instance URLs.
func (c *cluster) urls() []string {
	out := make([]string, len(c.Inst))
	for i, in := range c.Inst {
		out[i] = in.URL
	}
	return out
}

// sqliteInstances starts n authority instances on one SQLite file, each
// with its own store handle, Server and http.Server on loopback, on the
// real clock: the SQLite twin of newCluster.
func sqliteInstances(t *testing.T, n int, opts ...func(*authority.Config)) (urls []string, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "shared.db")
	for range n {
		st, err := authority.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		cfg := clusterConfig()
		cfg.Store = st
		for _, o := range opts {
			o(&cfg)
		}
		srv, err := authority.NewServer(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := httpserver.Authority(srv.Handler())
		go hs.Serve(ln)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			hs.Shutdown(ctx)
			st.Close()
		})
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return urls, path
}

// newClient keeps enough connections per instance alive for k clients.
func newClient(t *testing.T, k int) *http.Client {
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: k}, Timeout: 30 * time.Second}
	t.Cleanup(cl.CloseIdleConnections)
	return cl
}

func quoted(rev int64) string { return fmt.Sprintf(`"%d"`, rev) }
