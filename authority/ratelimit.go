package authority

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/ratelimit"
)

// Defaults of the rate limit on POST /v1/delegations (per client IP).
const (
	DefaultCreateBurst     = 30
	DefaultCreatePerSecond = 0.5
)

// newCreateLimit is the per-address limit on POST /v1/delegations
// (internal/ratelimit, on the server's clock), or nil when it is off. It
// counts in this instance's memory.
func newCreateLimit(cfg Config) ratelimit.Limiter {
	k := ratelimit.New(cfg.CreatePerSecond, cfg.CreateBurst, ratelimit.WithClock(cfg.Now))
	if k == nil {
		return nil // a nil *Keyed in the interface would not be nil
	}
	return k
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
