package authority_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/pling-go/pling/internal/httpserver"

	"github.com/pling-go/pling/internal/testing/rawhttp"
)

// TestPayloadTooLargeLingers: a 40 MB body sent whole before the answer
// is read gets the 413, not a connection reset, on the delegation routes
// and the task routes: the authority reads and drops the rest of the body
// (bounded) before it closes.
func TestPayloadTooLargeLingers(t *testing.T) {
	f := newFixture(t, openSQLite(t))
	_, tok := f.session()
	// The production server and handler too (metrics, tracing and
	// logging wrappers, read timeouts).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httpserver.Authority(f.srv.Handler())
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	for _, tc := range []struct{ name, addr, path, headers string }{
		{"delegations", strings.TrimPrefix(f.url, "http://"), "/v1/delegations", ""},
		{"tasks", strings.TrimPrefix(f.url, "http://"), "/v1/tasks", "Authorization: Bearer " + tok + "\r\n"},
		{"production server", ln.Addr().String(), "/v1/delegations", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := rawhttp.SendWholeThenRead(t, tc.addr, tc.path, tc.headers, 40<<20)
			if err != nil || st != http.StatusRequestEntityTooLarge {
				t.Fatalf("got %d, %v; want 413", st, err)
			}
		})
	}
}
