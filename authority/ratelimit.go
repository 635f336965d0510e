package authority

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"

	perr "github.com/pling-go/pling/errors"
)

// Defaults of the rate limit on POST /v1/delegations (per client IP).
const (
	DefaultCreateBurst     = 30
	DefaultCreatePerSecond = 0.5
	// maxBuckets bounds the clients the limiter remembers; beyond it the
	// full buckets are dropped first (a full bucket is the same as none),
	// and while every bucket is still draining a new client is refused
	// (fail closed, never unlimited).
	maxBuckets = 10_000
)

// bucket is one client's token bucket: tokens at atMs.
type bucket struct {
	tokens float64
	atMs   int64
}

// limiter is a token bucket per client IP.
type limiter struct {
	burst     float64
	perSecond float64
	mu        sync.Mutex
	buckets   map[string]*bucket
}

func newLimiter(burst int, perSecond float64) *limiter {
	if burst <= 0 || perSecond <= 0 {
		return nil // off
	}
	return &limiter{burst: float64(burst), perSecond: perSecond, buckets: map[string]*bucket{}}
}

// allow takes one token of client's bucket at nowMs; when there is none it
// says how long until there is.
func (l *limiter) allow(client string, nowMs int64) (bool, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[client]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.sweep(nowMs)
			if len(l.buckets) >= maxBuckets {
				return false, int64(math.Ceil(1000 / l.perSecond))
			}
		}
		b = &bucket{tokens: l.burst, atMs: nowMs}
		l.buckets[client] = b
	}
	if nowMs > b.atMs {
		b.tokens = math.Min(l.burst, b.tokens+float64(nowMs-b.atMs)*l.perSecond/1000)
		b.atMs = nowMs
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, int64(math.Ceil((1 - b.tokens) * 1000 / l.perSecond))
}

// sweep drops the buckets that have refilled (holding lock).
func (l *limiter) sweep(nowMs int64) {
	for k, b := range l.buckets {
		if b.tokens+float64(nowMs-b.atMs)*l.perSecond/1000 >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// clientIP is the request's peer address without the port, an IPv6
// address cut to its /64 (one host's least allocation, so a host cannot
// take a fresh bucket per address): the authority does not trust
// X-Forwarded-For (RATIONALE.md).
func clientIP(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		h = r.RemoteAddr
	}
	if ip, err := netip.ParseAddr(h); err == nil && ip.Is6() && !ip.Is4In6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return h
}

// rateLimited answers 429 RATE_LIMITED with Retry-After (whole seconds,
// rounded up) and details.retryAfterMs.
func (s *Server) rateLimited(w http.ResponseWriter, retryMs int64) {
	s.limited.Inc()
	w.Header().Set("Retry-After", strconv.FormatInt((retryMs+999)/1000, 10))
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{"code": string(perr.RateLimited),
		"message": "Too many delegation requests from this address", "details": map[string]any{"retryAfterMs": retryMs}}})
}
