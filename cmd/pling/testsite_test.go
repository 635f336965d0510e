package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// serveAt serves h on loopback until the test ends and returns its
// origin as reached by host: localhost and 127.0.0.1 are the same server
// and two origins, which the tests of what crosses origins need.
func serveAt(t *testing.T, host string, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "http://" + host + ":" + port
}

// htmlPage answers with the HTML that body makes at each request.
func htmlPage(body func() string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body())
	}
}

// bodyLog keeps the bodies of what a test site's pages send it (at most
// limit bytes of each), in order, for the test to read while they run.
type bodyLog struct {
	limit int64
	mu    sync.Mutex
	got   []string
}

// record reads r's body into the log and returns it.
func (l *bodyLog) record(r *http.Request) string {
	b, _ := io.ReadAll(io.LimitReader(r.Body, l.limit))
	l.mu.Lock()
	l.got = append(l.got, string(b))
	l.mu.Unlock()
	return string(b)
}

// handle is an http.HandlerFunc that records each request's body.
func (l *bodyLog) handle(w http.ResponseWriter, r *http.Request) { l.record(r) }

// bodies is what was recorded so far.
func (l *bodyLog) bodies() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}
