package authority

import (
	"context"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFeedSlotsPerClient: one client address holds at most its own bound
// of the feed's long-poll slots, so that others (the followers) still
// find one; the instance's bound still holds.
func TestFeedSlotsPerClient(t *testing.T) {
	st, err := OpenSQLite(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := NewServer(context.Background(), Config{Store: st, Audiences: map[string][]string{"https://a.example": {"*"}},
		MaxFeedWaiters: 4, MaxFeedWaitersPerClient: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	var releases []func()
	take := func(client string) {
		r, ok := s.feedSlot(client)
		got = append(got, ok)
		if ok {
			releases = append(releases, r)
		}
	}
	take("anon") // 1
	take("anon") // 2
	take("anon") // refused: the client's bound
	take("gateway")
	take("other")
	take("third") // refused: the instance's bound (4)
	releases[0]()
	take("anon")
	if diff := cmp.Diff([]bool{true, true, false, true, true, false, true}, got); diff != "" {
		t.Errorf("slots (-want +got):\n%s", diff)
	}
}

// TestForwardedClient: a request counts against its connection's address
// unless that address is a trusted proxy; then against the rightmost
// X-Forwarded-For hop that is not a trusted proxy. A header from an
// untrusted client, or a malformed hop, never names the client.
func TestForwardedClient(t *testing.T) {
	s := &Server{cfg: Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("192.0.2.7/32")}}}
	for _, tc := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"no proxy", "203.0.113.5:4000", nil, "203.0.113.5"},
		{"untrusted client's header is ignored", "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		{"trusted balancer", "10.1.2.3:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"the rightmost untrusted hop", "10.1.2.3:4000", []string{"6.6.6.6, 198.51.100.1, 192.0.2.7"}, "198.51.100.1"},
		{"two header lines", "10.1.2.3:4000", []string{"6.6.6.6", "198.51.100.1"}, "198.51.100.1"},
		{"a malformed hop counts the proxy", "10.1.2.3:4000", []string{"198.51.100.1, not-an-ip"}, "10.1.2.3"},
		{"no header from the balancer", "10.1.2.3:4000", nil, "10.1.2.3"},
		{"only trusted hops", "10.1.2.3:4000", []string{"10.1.9.9"}, "10.1.2.3"},
		{"IPv6 client by its /64", "10.1.2.3:4000", []string{"2001:db8:1:2:3:4:5:6"}, "2001:db8:1:2::/64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/v1/revocations", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.feedClient(r); got != tc.want {
				t.Errorf("feedClient = %q, want %q", got, tc.want)
			}
		})
	}
}
