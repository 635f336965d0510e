// Package gateway is the OpenAI-compatible model proxy that `pling gateway`
// runs (docs/gateway.md): an in-page assistant's way to a model without the
// provider key ever reaching the page.
//
// It serves POST /v1/chat/completions (streamed chunk by chunk when the
// request says "stream": true) and GET /v1/models (the allowlist). A request
// is checked in a fixed order — body size, JSON, model present, model
// allowed, caller, the caller's rate — and every refusal is an
// OpenAI-compatible error body (errors.RenderGateway), so any OpenAI client
// library reports it with its own error type.
package gateway

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	perr "github.com/pling-go/pling/errors"

	"github.com/pling-go/pling/internal/ratelimit"
)

// Config configures a Server. A Server is built even when Upstream or
// UpstreamKey is missing: it then answers GATEWAY_MISCONFIGURED to
// authenticated calls and 503 on /readyz, so the operator sees why.
type Config struct {
	// Upstream is the provider's base URL, e.g. https://api.example/v1;
	// the gateway calls Upstream + "/chat/completions".
	Upstream string
	// UpstreamKey is the provider key, sent as a bearer token upstream and
	// nowhere else.
	UpstreamKey string
	// Models is the allowlist; empty allows none.
	Models []string
	// SeparateMetrics leaves GET /metrics out of Handler: it is served by
	// MetricsHandler on an admin address (pling gateway --metrics-addr).
	SeparateMetrics bool
	// UpstreamTimeout bounds the wait for the upstream's answer: its
	// response headers, then each gap between two chunks of a stream, and
	// the whole of an answer that is not streamed (default 2m).
	UpstreamTimeout time.Duration
	// WriteIdleTimeout bounds one write to a caller: a caller that reads
	// nothing for this long is dropped and its upstream request cancelled
	// (default 30s).
	WriteIdleTimeout time.Duration
	// SiteKeys are the sites' bearer keys; only their SHA-256 digests are
	// kept.
	SiteKeys []string
	// Tokens verifies delegation tokens (nil: tokens are refused).
	Tokens *TokenAuth
	// MaxBodyBytes caps a request body (default 1 MiB).
	MaxBodyBytes int64
	// RatePerSecond and Burst are each caller's token bucket (defaults 2
	// and 20).
	RatePerSecond float64
	Burst         int
	// Limiter, when set, replaces the in-memory bucket of RatePerSecond
	// and Burst: an authority.StoreLimiter keeps each caller's bucket in
	// the authority's store, so that several instances allow the limit
	// once, not once each (pling gateway --limits-store). A limiter that
	// also has AllowErr(ctx, key) (StoreLimiter does) is asked through it,
	// and an error refuses the call (fail closed, GATEWAY_RATE_LIMITED
	// with Retry-After 1).
	Limiter Limiter
	// Client calls the upstream (default: a client with no overall
	// timeout, since streams are bounded by UpstreamTimeout per gap).
	Client *http.Client
	Logger *slog.Logger
}

// DefaultRatePerSecond and DefaultBurst are each caller's token bucket
// when Config leaves them zero.
const (
	DefaultRatePerSecond = 2
	DefaultBurst         = 20
)

// Limiter decides whether the caller key may call now; when not, it says
// how long until it may (and spends nothing). The callers' keys it sees
// are digests, never credentials.
type Limiter interface {
	Allow(key string) (ok bool, retryAfter time.Duration)
}

// errLimiter is a Limiter that can say its store failed, so the gateway
// logs that rather than a plain limit.
type errLimiter interface {
	AllowErr(ctx context.Context, key string) (bool, time.Duration, error)
}

// Server is the gateway's HTTP handler.
type Server struct {
	cfg      Config
	models   []string
	siteKeys [][sha256.Size]byte
	upstream string  // Upstream + "/chat/completions", or "" when unusable
	limits   Limiter // a token bucket per caller
	metrics  *metrics
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	if cfg.UpstreamTimeout <= 0 {
		cfg.UpstreamTimeout = 2 * time.Minute
	}
	if cfg.WriteIdleTimeout <= 0 {
		cfg.WriteIdleTimeout = 30 * time.Second
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.RatePerSecond <= 0 {
		cfg.RatePerSecond = DefaultRatePerSecond
	}
	if cfg.Burst <= 0 {
		cfg.Burst = DefaultBurst
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 256,
			IdleConnTimeout: 90 * time.Second, ForceAttemptHTTP2: true}}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, limits: cfg.Limiter, metrics: newMetrics()}
	if s.limits == nil {
		s.limits = ratelimit.New(cfg.RatePerSecond, cfg.Burst)
	}
	for _, m := range cfg.Models {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(s.models, m) {
			s.models = append(s.models, m)
		}
	}
	for _, k := range cfg.SiteKeys {
		if k != "" {
			s.siteKeys = append(s.siteKeys, sha256.Sum256([]byte(k)))
		}
	}
	if u, err := url.Parse(cfg.Upstream); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		s.upstream = strings.TrimSuffix(cfg.Upstream, "/") + "/chat/completions"
	}
	return s
}

// Misconfigured says what keeps the gateway from calling its upstream, or
// "" when nothing does. It never includes the key.
func (s *Server) Misconfigured() string {
	var why []string
	if s.upstream == "" {
		why = append(why, "no usable upstream URL")
	}
	if s.cfg.UpstreamKey == "" {
		why = append(why, "no upstream key")
	}
	if len(s.models) == 0 {
		why = append(why, "no models allowed")
	}
	return strings.Join(why, ", ")
}

// fail writes a gateway error. retryAfter, when positive, is sent as
// Retry-After in whole seconds.
func fail(w http.ResponseWriter, code perr.Code, retryAfter string) {
	status, body := perr.RenderGateway(perr.New(code, "", nil))
	if sw, ok := w.(*statusWriter); ok {
		sw.errCode = code
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// upstreamErrCode is the gateway code a failed upstream call becomes.
func upstreamErrCode(err error, timedOut bool) perr.Code {
	if timedOut || errors.Is(err, context.DeadlineExceeded) {
		return perr.GatewayUpstreamTimeout
	}
	return perr.GatewayUpstreamUnavailable
}
