package authority_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/authority/follow"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// followersFor is how long TestFollowersBehindABalancer keeps its
// followers running: 10 s, or PLING_TEST_FOLLOWERS_FOR (a Go duration;
// the acceptance run is 2m).
func followersFor(t *testing.T) time.Duration {
	if v := os.Getenv("PLING_TEST_FOLLOWERS_FOR"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("PLING_TEST_FOLLOWERS_FOR: %v", err)
		}
		return d
	}
	return 10 * time.Second
}

// TestFollowersBehindABalancer: 41 followers (gateways, pages) reach the
// authority through one load balancer, so every long-poll comes from the
// balancer's one address, past the feed's bound of 16 per client. With
// the balancer named a trusted proxy, each follower counts as the
// address the balancer forwarded: no poll is refused, every follower
// stays current for the whole run, and a revocation reaches all of them.
// Without it, the balancer's address holds 16 slots and the others are
// refused 503 (the documented caveat).
func TestFollowersBehindABalancer(t *testing.T) {
	const followers = 41
	for _, tc := range []struct {
		name    string
		trusted []netip.Prefix
		run     time.Duration
	}{
		{"balancer trusted", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, followersFor(t)},
		{"balancer not trusted", nil, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := authoritytest.Start(t, authority.Config{Audiences: map[string][]string{origin: {"*"}},
				OperatorKeys: []string{opKey}, TrustedProxies: tc.trusted}, nil)
			target, _ := url.Parse(a.URL)
			var refused atomic.Int64
			tr := &http.Transport{MaxIdleConnsPerHost: 2 * followers}
			t.Cleanup(tr.CloseIdleConnections)
			fs := make([]*follow.Follower, followers)
			for i := range fs {
				// One balancer, seen by the authority from one address;
				// each follower's own address is what it forwards.
				client := "10.0.0." + strconv.Itoa(i+1)
				lb := httptest.NewServer(&httputil.ReverseProxy{Transport: tr, ErrorLog: log.New(io.Discard, "", 0),
					Rewrite: func(r *httputil.ProxyRequest) {
						r.SetURL(target)
						r.Out.Header.Set("X-Forwarded-For", client)
					},
					ModifyResponse: func(res *http.Response) error {
						if res.StatusCode == http.StatusServiceUnavailable {
							refused.Add(1)
						}
						return nil
					}})
				t.Cleanup(lb.Close)
				f, err := follow.New(lb.URL, origin, follow.WithWait(2))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(f.Close)
				fs[i] = f
			}
			for _, f := range fs {
				select {
				case <-f.Ready():
				case <-time.After(10 * time.Second):
					t.Fatal("a follower did not start")
				}
			}
			end := time.Now().Add(tc.run)
			for time.Now().Before(end) {
				time.Sleep(500 * time.Millisecond)
				if tc.trusted == nil {
					continue
				}
				now := time.Now().UnixMilli()
				for i, f := range fs {
					if err := f.Current(now); err != nil {
						t.Fatalf("follower %d is not current: %v (%d polls refused)", i, err, refused.Load())
					}
				}
			}
			if tc.trusted == nil {
				if refused.Load() == 0 {
					t.Fatal("41 followers behind one untrusted balancer were never refused: the per-client bound is gone")
				}
				return
			}
			if n := refused.Load(); n != 0 {
				t.Fatalf("%d polls of the feed refused 503", n)
			}
			s := authoritytest.DeviceGrant(t, a.URL, opKey, authoritytest.Grant{Audience: origin, Scope: []string{"orders.read"}, Agent: "a"})
			for i, f := range fs {
				if _, err := f.Verify(context.Background(), s.Token, time.Now().UnixMilli()); err != nil {
					t.Fatalf("follower %d refuses a live token: %v", i, err)
				}
			}
			authoritytest.Call(t, a.URL, http.MethodPost, "/v1/sessions/"+s.SID+"/revoke", opKey, nil)
			deadline := time.Now().Add(12 * time.Second) // the followers' freshness bound
			for i, f := range fs {
				for {
					if _, err := f.Verify(context.Background(), s.Token, time.Now().UnixMilli()); err != nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("follower %d still accepts a revoked token", i)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
}
