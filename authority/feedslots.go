package authority

import (
	"net/http"
	"net/netip"
	"strings"
	"sync"

	perr "github.com/pling-go/pling/errors"
)

// DefaultMaxFeedWaitersPerClient bounds the revocation feed's long-polls
// parked on one instance by one client address, so that anonymous
// clients filling the slots cannot starve the followers (gateways, pages)
// that count on the feed: with the default 1,024 slots, at least 64
// addresses can each hold their bound.
const DefaultMaxFeedWaitersPerClient = 16

// feedClient is whom a long-poll of the feed counts against: the client
// address of the connection, or, when the connection comes from one of
// Config.TrustedProxies (the site's load balancers), the address the
// proxies forwarded: the rightmost X-Forwarded-For entry that is not a
// trusted proxy itself. A balancer merges every follower behind it into
// its own address; its forwarded address does not, and a client cannot
// forge it past a proxy that appends to the header.
func (s *Server) feedClient(r *http.Request) string {
	return s.forwardedClient(r)
}

// forwardedClient is clientIP, seen through the trusted proxies.
func (s *Server) forwardedClient(r *http.Request) string {
	c := clientIP(r)
	if len(s.cfg.TrustedProxies) == 0 || !s.trusted(c) {
		return c
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h := strings.TrimSpace(hops[i])
		ip, err := netip.ParseAddr(h)
		if err != nil {
			return c // a malformed hop: count the proxy, never a made-up name
		}
		if s.trusted(ip.Unmap().String()) {
			continue
		}
		if ip.Is6() && !ip.Is4In6() {
			if p, err := ip.Prefix(64); err == nil {
				return p.String()
			}
		}
		return ip.Unmap().String()
	}
	return c
}

// trusted reports whether the address (clientIP's form) is one of the
// trusted proxies.
func (s *Server) trusted(addr string) bool {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// feedSlots counts the parked long-polls per client address.
type feedSlots struct {
	mu       sync.Mutex
	byClient map[string]int
}

// feedSlot takes one of the feed's long-poll slots for client: false
// when the instance or this client holds its bound.
func (s *Server) feedSlot(client string) (release func(), ok bool) {
	per := s.cfg.MaxFeedWaitersPerClient
	if per <= 0 {
		per = DefaultMaxFeedWaitersPerClient
	}
	f := &s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byClient == nil {
		f.byClient = map[string]int{}
	}
	if f.byClient[client] >= per || s.waiters.Load() >= int64(s.cfg.MaxFeedWaiters) {
		return nil, false
	}
	f.byClient[client]++
	s.waiters.Add(1)
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.byClient[client]--; f.byClient[client] <= 0 {
			delete(f.byClient, client)
		}
		s.waiters.Add(-1)
	}, true
}

// pendingRefused answers a delegation request when its audience or its
// address holds its bound of pending delegations: 429 with Retry-After,
// like the per-address rate limit.
func (s *Server) pendingRefused(w http.ResponseWriter, msg string) {
	s.limited.Inc()
	w.Header().Set("Retry-After", "60")
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{"code": string(perr.RateLimited),
		"message": msg, "details": map[string]any{"retryAfterMs": 60_000}}})
}
