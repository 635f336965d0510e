package follow_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/authority/follow"
)

// TestHostileFeedDoesNotSpin: an authority (hostile, broken, or over its
// bound of parked polls) that answers the feed at once, empty or not, does
// not make the follower poll it in a tight loop: polls are at least
// follow's minimum gap apart, so a page's fetches stay bounded.
func TestHostileFeedDoesNotSpin(t *testing.T) {
	for _, tc := range []struct{ name, feed string }{
		{"empty at once", `{"cursor":"0","revoked":[]}`},
		{"the same entry again and again", `{"cursor":"1","revoked":[{"sessionId":"s1","at":"2026-01-01T00:00:00Z"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var polls atomic.Int64
			f := followFeed(t, func(w http.ResponseWriter, r *http.Request) {
				polls.Add(1)
				w.Write([]byte(tc.feed))
			})
			time.Sleep(time.Second)
			f.Close()
			// At most one poll per minimum gap (250 ms) in that second, with
			// room; a tight loop made thousands.
			if n := polls.Load(); n > 10 {
				t.Fatalf("%d feed polls in one second", n)
			}
		})
	}
}

// TestHostileFeedIDsBounded: the revoked set is bounded in count
// (MaxRevoked) and, now, in what one entry may hold: a session id is what
// the authority makes (1–128 of [A-Za-z0-9_-]), so an answer with a
// 512 KiB "session id" (200 000 of them would be 100 GiB) is malformed,
// kept nowhere, and the cursor does not move past it.
func TestHostileFeedIDsBounded(t *testing.T) {
	var polls, pastIt atomic.Int64
	huge := strings.Repeat("A", 512<<10)
	f := followFeed(t, func(w http.ResponseWriter, r *http.Request) {
		polls.Add(1)
		if r.URL.Query().Get("after") == "1" {
			pastIt.Add(1)
			w.Write([]byte(`{"cursor":"1","revoked":[]}`))
			return
		}
		w.Write([]byte(`{"cursor":"1","revoked":[{"sessionId":"` + huge + `","at":"2026-01-01T00:00:00Z"}]}`))
	})
	defer f.Close()
	deadline := time.Now().Add(5 * time.Second)
	for polls.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := pastIt.Load(); n != 0 {
		t.Fatalf("the follower took the answer and asked after it %d times", n)
	}
	select {
	case <-f.Ready():
		t.Fatal("ready on a malformed feed")
	default:
	}
}

// followFeed starts an authority on loopback that serves one all-zero
// signing key and answers every other request (the revocation feed) with
// feed, and a follower of it with opts; the server stops with the test.
func followFeed(t *testing.T, feed http.HandlerFunc, opts ...follow.Option) *follow.Follower {
	t.Helper()
	key := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/v1/keys") {
			w.Write([]byte(`{"keys":[{"kid":"k1","alg":"Ed25519","publicKey":"` + key + `","notAfter":null}]}`))
			return
		}
		feed(w, r)
	}))
	t.Cleanup(hs.Close)
	opts = append([]follow.Option{follow.WithTransport(follow.HTTPTransport{Client: hs.Client()})}, opts...)
	f, err := follow.New(hs.URL, "https://shop.example", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
