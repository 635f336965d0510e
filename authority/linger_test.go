package authority_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
)

// sendWholeThenRead is a client that sends its whole body before it reads
// (as Python's urllib does): the request head and size bytes of body on a
// raw connection, then the answer. It returns the status, or the error
// (a connection reset) that stood in its way.
func sendWholeThenRead(t *testing.T, addr, path, headers string, size int) (int, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n", path, addr, size, headers)
	if _, err := c.Write([]byte(head)); err != nil {
		return 0, err
	}
	chunk := bytes.Repeat([]byte{' '}, 1<<20)
	for sent := 0; sent < size; sent += len(chunk) {
		if _, err := c.Write(chunk[:min(len(chunk), size-sent)]); err != nil {
			return 0, fmt.Errorf("writing the body at %d bytes: %w", sent, err)
		}
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

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
	hs := authority.NewHTTPServer(f.srv.Handler())
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	for _, tc := range []struct{ name, addr, path, headers string }{
		{"delegations", strings.TrimPrefix(f.url, "http://"), "/v1/delegations", ""},
		{"tasks", strings.TrimPrefix(f.url, "http://"), "/v1/tasks", "Authorization: Bearer " + tok + "\r\n"},
		{"production server", ln.Addr().String(), "/v1/delegations", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := sendWholeThenRead(t, tc.addr, tc.path, tc.headers, 40<<20)
			if err != nil || st != http.StatusRequestEntityTooLarge {
				t.Fatalf("got %d, %v; want 413", st, err)
			}
		})
	}
}
