package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestBrowserHostileAuthorityBody: a page whose data-authority answers
// GET /v1/keys with a body that never ends. The module reads the answer
// chunk by chunk and cancels it past follow's 1 MiB cap, instead of
// res.text(), which held all of it until the call's timeout (hundreds of
// megabytes in a tab). The hostile server counts what it could write
// before the page hung up.
func TestBrowserHostileAuthorityBody(t *testing.T) {
	d := dist(t)
	var firstBytes atomic.Int64
	firstDone := make(chan struct{})
	var calls atomic.Int64
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/v1/keys" {
			w.Write([]byte(`{"cursor":"0","revoked":[]}`))
			return
		}
		first := calls.Add(1) == 1
		chunk := []byte(strings.Repeat(" ", 64<<10))
		w.Write([]byte(`{"keys":[`))
		var n int64
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && n < 1<<30 {
			if _, err := w.Write(chunk); err != nil {
				break
			}
			w.(http.Flusher).Flush()
			n += int64(len(chunk))
		}
		if first {
			firstBytes.Store(n)
			close(firstDone)
		}
	}))
	t.Cleanup(hostile.Close)
	var followed followedAuthority
	followed.set(hostile.URL)
	extra := http.NewServeMux()
	extra.HandleFunc("/test/hostile.html", followed.page(authorityPage))
	site := startBrowserSite(t, d, extra)
	tb := site.open(t, "/test/hostile.html")
	// A request makes the module configure itself, and so follow the
	// authority; it waits for the first sync (up to 5 s) and fails closed.
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		_, _ = tb.page.RoundTrip(ctx, []byte(`{"protocol":"pling.surface/0.1","id":"d1","method":"describe"}`))
	}()
	select {
	case <-firstDone:
	case <-time.After(15 * time.Second):
		t.Fatalf("the page never hung up on the endless keys answer (%d calls)", calls.Load())
	}
	// 1 MiB of cap plus what the sockets and the browser's network stack
	// buffer; a page that read the whole answer took far more.
	if n := firstBytes.Load(); n > 64<<20 {
		t.Fatalf("the hostile authority wrote %d MiB before the page hung up", n>>20)
	}
	t.Logf("the page hung up after %d KiB", firstBytes.Load()>>10)
}
