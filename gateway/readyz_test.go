package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/httpcheck"
)

// TestReadyzSaysFeedNotCurrent: a gateway whose
// revocation feed falls behind (the authority stops answering after the
// gateway started) turns /readyz to 503 "revocation feed not current"
// once the follower's view is older than the feed's long poll plus its
// grace (30 s), and back to 200 once the authority answers again. It
// waits out that real bound, so it does not run under -short.
func TestReadyzSaysFeedNotCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("waits the follower's 30 s freshness bound")
	}
	a := newAuthority(t)
	var up atomic.Bool
	up.Store(true)
	target, _ := url.Parse(a.url)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	ta := startTokenAuth(t, front.URL)
	e := start(t, answer("hi"), func(c *gateway.Config) { c.Tokens = ta })
	readyz := func() (int, string) { return httpcheck.Get(t, e.gw.URL+"/readyz") }
	if code, body := readyz(); code != 200 {
		t.Fatalf("readyz with the feed current: %d %s", code, body)
	}
	up.Store(false)
	front.CloseClientConnections() // the long poll in flight ends too
	deadline := time.Now().Add(90 * time.Second)
	for {
		code, body := readyz()
		if code == 503 && strings.Contains(body, "revocation feed not current") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz 90 s after the authority stopped answering: %d %s, want 503 revocation feed not current", code, body)
		}
		time.Sleep(500 * time.Millisecond)
	}
	up.Store(true)
	deadline = time.Now().Add(90 * time.Second)
	for {
		code, body := readyz()
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz 90 s after the authority answered again: %d %s, want 200", code, body)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
