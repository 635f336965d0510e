package authority

import (
	"net/http"
	"sync"

	perr "github.com/pling-go/pling/errors"
)

// DefaultMaxFeedWaitersPerClient bounds the revocation feed's long-polls
// parked on one instance by one client address, so that anonymous
// clients filling the slots cannot starve the followers (gateways, pages)
// that count on the feed: with the default 1,024 slots, at least 64
// addresses can each hold their bound.
const DefaultMaxFeedWaitersPerClient = 16

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
