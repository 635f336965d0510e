package authority

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/linger"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Server. Store and Audiences are required.
type Config struct {
	Store Store
	// Audiences maps each page origin the authority issues for to the
	// scope patterns a token for it may carry at most.
	Audiences map[string][]string
	// OperatorKeys are the operators' bearer keys; only their SHA-256
	// digests are kept.
	OperatorKeys []string
	// VerificationURI is where a person enters the user code; "" is the
	// authority's own consent screen (ConsentPath) at the address the
	// agent asked.
	VerificationURI string
	// ScreenSubject names the signed-in person deciding on the consent
	// screen (the token's subject, the owner of the agent's continuity
	// tasks); ok false refuses the approval (not signed in). nil names
	// the browser: "browser:" and a digest of its screen cookie, a stable
	// pseudonym per browser.
	ScreenSubject func(r *http.Request) (subject string, ok bool)
	// Interval is the least time between two token polls (default 5s).
	Interval time.Duration
	// PendingTTL is how long a delegation waits for consent (default 10m).
	PendingTTL time.Duration
	// MaxTokenTTL caps ttlSeconds (default 1h).
	MaxTokenTTL time.Duration
	// MaxBodyBytes caps a request body (default 16 KiB).
	MaxBodyBytes int64
	// MaxWait caps waitSeconds of the revocation feed (default 30s).
	MaxWait time.Duration
	// MaxFeedWaiters bounds the revocation feed's long-polls parked on
	// this instance at once (default 1024); one more is refused with 503
	// and Retry-After, so a flood of held connections cannot turn into a
	// store query per connection per second without end.
	MaxFeedWaiters int
	// MaxFeedWaitersPerClient bounds those of one client address
	// (default DefaultMaxFeedWaitersPerClient; feedslots.go).
	MaxFeedWaitersPerClient int
	// TrustedProxies are the load balancers in front of the authority: a
	// request from one of them counts, for the feed's per-client bound
	// and the per-address delegation limit, against the address its
	// X-Forwarded-For names (feedslots.go), not the balancer's own.
	TrustedProxies []netip.Prefix
	// Continuity (continuity.go): MaxStateBytes caps a task's state
	// (default 64 KiB); MaxLeaseTTL caps a lease's ttlSeconds (default
	// 10m); MaxClockSkew is the most the clocks of instances sharing the
	// store may disagree (default 2s); IdempotencyTTL is how long an
	// Idempotency-Key's answer is kept (default 24h).
	MaxStateBytes  int64
	MaxLeaseTTL    time.Duration
	MaxClockSkew   time.Duration
	IdempotencyTTL time.Duration
	// MaxRequestsPerSession bounds the request records (shared replay
	// guard) one session may hold (default 10000).
	MaxRequestsPerSession int64
	// CreateBurst and CreatePerSecond are the token bucket of POST
	// /v1/delegations per client IP (defaults DefaultCreateBurst and
	// DefaultCreatePerSecond; a negative value turns the limit off).
	CreateBurst     int
	CreatePerSecond float64
	// ApprovalBurst and ApprovalPerSecond are the token bucket of POST
	// /v1/approvals per client IP (defaults DefaultApprovalBurst and
	// DefaultApprovalPerSecond; negative: off); MaxApprovalsPerSession
	// bounds the unexpired approvals of one session (default
	// DefaultMaxApprovalsPerSession).
	ApprovalBurst          int
	ApprovalPerSecond      float64
	MaxApprovalsPerSession int64
	// Retention is how long records are kept and how the background
	// sweeper (RunSweeper) runs (sweeper.go).
	Retention RetentionConfig
	// SeparateMetrics leaves GET /metrics out of Handler: it is served
	// by MetricsHandler on an admin address (metrics.go).
	SeparateMetrics bool
	// KEK is the key-encryption key (KEKSize bytes) the signing keys are
	// sealed with in the store (kek.go); nil stores them plain (the
	// command requires one on PostgreSQL). OldKEKs open keys sealed
	// under a previous KEK, which are sealed again under KEK at start.
	KEK     []byte
	OldKEKs [][]byte
	// Passkeys turns on the person's passkeys for the approvals a site
	// marks (passkey.go).
	Passkeys PasskeyConfig
	// SealPlainKeys says that the signing keys stored plain are this
	// authority's own, from before a KEK was set: they are sealed at
	// start and each is logged. Without it a plain key beside a KEK
	// refuses the start (ErrPlainKey), and one written later is never
	// used nor published.
	SealPlainKeys bool
	Now           func() time.Time
	Logger        *slog.Logger
}

// Server is the authority's HTTP handler.
type Server struct {
	raw       Store // the store as configured, before sealing (kek.go)
	cfg       Config
	opDigests [][sha256.Size]byte
	mux       *http.ServeMux

	mu      sync.Mutex
	revoked chan struct{} // closed and replaced on each revocation here

	storeErrors prometheus.Counter
	cont        continuity
	createLimit rateLimiter // nil: off
	// approvalLimit is POST /v1/approvals' per-address limit (nil: off).
	approvalLimit rateLimiter
	// invokes keeps the delegated sessions' invoke buckets (invokelimit.go).
	invokes    RateStore
	limited    prometheus.Counter
	waiters    atomic.Int64 // long-polls parked on the feed now
	waitersG   prometheus.GaugeFunc
	instanceID string // names this instance in the store's leases
	sweeps     sweepMetrics
	feed       feedSlots
	epochC     epochCache
	metricsReg metricsRegistry
	screenKey  []byte // the screens' CSRF tokens and pseudonyms (screen.go)
	screenCOP  *http.CrossOriginProtection
	passkeys   *passkeys // nil: passkeys off (passkey.go)
}

// NewServer returns a Server; it creates a signing key when the store has
// none.
func NewServer(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil || len(cfg.Audiences) == 0 {
		return nil, errors.New("authority: a store and at least one audience are required")
	}
	for aud := range cfg.Audiences {
		if !isOrigin(aud) {
			return nil, fmt.Errorf("authority: audience %q is not a page origin (scheme://host[:port], lower case, no path, no default port)", aud)
		}
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	if cfg.PendingTTL <= 0 {
		cfg.PendingTTL = 10 * time.Minute
	}
	if cfg.MaxTokenTTL <= 0 {
		cfg.MaxTokenTTL = time.Hour
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 16 << 10
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 30 * time.Second
	}
	if cfg.MaxFeedWaiters <= 0 {
		cfg.MaxFeedWaiters = 1024
	}
	if cfg.MaxStateBytes <= 0 {
		cfg.MaxStateBytes = 64 << 10
	}
	if cfg.MaxLeaseTTL <= 0 {
		cfg.MaxLeaseTTL = 10 * time.Minute
	}
	if cfg.MaxClockSkew <= 0 {
		cfg.MaxClockSkew = 2 * time.Second
	}
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = 24 * time.Hour
	}
	if cfg.MaxRequestsPerSession <= 0 {
		cfg.MaxRequestsPerSession = 10_000
	}
	if cfg.CreateBurst == 0 {
		cfg.CreateBurst = DefaultCreateBurst
	}
	if cfg.CreatePerSecond == 0 {
		cfg.CreatePerSecond = DefaultCreatePerSecond
	}
	if cfg.ApprovalBurst == 0 {
		cfg.ApprovalBurst = DefaultApprovalBurst
	}
	if cfg.ApprovalPerSecond == 0 {
		cfg.ApprovalPerSecond = DefaultApprovalPerSecond
	}
	if cfg.MaxApprovalsPerSession <= 0 {
		cfg.MaxApprovalsPerSession = DefaultMaxApprovalsPerSession
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Retention.defaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, revoked: make(chan struct{}), storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pling_authority_store_errors_total", Help: "Store calls that failed."}), cont: newContinuity(),
		createLimit: newCreateLimiter(cfg), approvalLimit: newApprovalLimiter(cfg), invokes: invokeBuckets(cfg.Store),
		limited: prometheus.NewCounter(prometheus.CounterOpts{Name: "pling_authority_rate_limited_total",
			Help: "Delegation requests refused by the per-address rate limit."})}
	s.instanceID, s.sweeps = "i"+randomID(12), newSweepMetrics()
	s.screenKey, s.screenCOP = screenSecret(cfg.KEK), http.NewCrossOriginProtection()
	s.waitersG = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pling_authority_feed_waiters",
		Help: "Revocation feed long-polls parked on this instance now."}, func() float64 { return float64(s.waiters.Load()) })
	for _, k := range cfg.OperatorKeys {
		if k != "" {
			s.opDigests = append(s.opDigests, sha256.Sum256([]byte(k)))
		}
	}
	sealed := newSealedStore(cfg.Store, cfg.KEK, cfg.OldKEKs)
	sealed.plain = func(kid string) {
		cfg.Logger.Error("a signing key is stored plain although a KEK is set: not used", "kid", kid)
	}
	if err := sealed.reseal(ctx, s.nowMs(), cfg.SealPlainKeys, func(kid string) {
		cfg.Logger.Warn("sealed a signing key that was stored plain", "kid", kid)
	}); err != nil {
		return nil, err
	}
	// The optional parts of a store (approvals, maintenance) are found on
	// the store itself: the sealing wrapper passes only Store through.
	s.raw = cfg.Store
	pk, err := newPasskeys(cfg, cfg.Store)
	if err != nil {
		return nil, err
	}
	s.passkeys = pk
	s.cfg.Store = sealed
	keys, err := s.cfg.Store.Keys(ctx, s.nowMs())
	if err != nil {
		return nil, err
	}
	if activeKey(keys) == nil {
		if err := s.addKey(ctx); err != nil {
			return nil, err
		}
	}
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/delegations", s.create)
	m.HandleFunc("GET /v1/delegations", s.operator(s.byUserCode))
	m.HandleFunc("GET /v1/delegations/{id}", s.operator(s.get))
	m.HandleFunc("POST /v1/delegations/{id}/approve", s.operator(s.decide(StatusApproved)))
	m.HandleFunc("POST /v1/delegations/{id}/deny", s.operator(s.decide(StatusDenied)))
	m.HandleFunc("POST /v1/delegations/{id}/token", s.token)
	m.HandleFunc("POST /v1/sessions/{id}/revoke", s.revoke)
	m.HandleFunc("GET /v1/keys", s.keys)
	m.HandleFunc("POST /v1/keys/rotate", s.operator(s.rotate))
	m.HandleFunc("GET /v1/revocations", s.revocations)
	s.routeContinuity(m)
	s.routeApprovals(m)
	m.HandleFunc(ConsentPath, s.serveConsent)
	m.HandleFunc(ApprovalPath, s.serveApproval)
	m.HandleFunc(PasskeysPath, s.servePasskeys)
	m.HandleFunc("GET "+passkeyScriptPath, s.servePasskeyScript)
	m.HandleFunc("POST /v1/sessions/{id}/requests/{rid}", s.consumeRequest)
	m.HandleFunc("PUT /v1/sessions/{id}/requests/{rid}/complete", s.completeRequest)
	m.HandleFunc("POST /v1/sessions/{id}/invokes", s.takeInvoke)
	s.mux = m
	return s, nil
}

// isOrigin reports whether s is an http(s) origin spelled as a browser
// sends it in Origin: scheme://host[:port], lower case, without path,
// query, user or default port ("null" is not one).
func isOrigin(s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ToLower(s) != s {
		return false
	}
	if (u.Scheme == "http" && u.Port() == "80") || (u.Scheme == "https" && u.Port() == "443") {
		return false
	}
	return s == u.Scheme+"://"+u.Host
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cors(w, r) || !s.cleanRequest(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) nowMs() int64 { return s.cfg.Now().UnixMilli() }

var b64 = base64.RawURLEncoding

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b64.EncodeToString(b)
}

// fail writes the error body with the namespace's HTTP status.
func (s *Server) fail(w http.ResponseWriter, code perr.Code, msg string) {
	s.failStatus(w, perr.DelegationHTTPStatus(code), code, msg)
}

func (s *Server) failStatus(w http.ResponseWriter, status int, code perr.Code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": string(code), "message": msg}})
}

func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	s.storeErrors.Inc()
	s.cfg.Logger.Error("store", "route", r.Pattern, "err", err.Error())
	s.fail(w, perr.DelegationInternal, "The authority could not complete the request")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// refused answers a store error: one that is target with code and msg,
// any other as internal. It reports whether there was an error to answer.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, err, target error, code perr.Code, msg string) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, target):
		s.fail(w, code, msg)
	default:
		s.internal(w, r, err)
	}
	return true
}

// readCapped reads the request's body, at most limit bytes. A larger one
// is answered 413 with code, then the rest of it is dropped
// (internal/linger), and tooLarge is true; any other read error is left to
// the caller to answer.
func (s *Server) readCapped(w http.ResponseWriter, r *http.Request, limit int64, code perr.Code) (data []byte, tooLarge bool, err error) {
	orig := r.Body
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	data, err = io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		linger.Prepare(w)
		s.failStatus(w, http.StatusRequestEntityTooLarge, code, "The request body is too large")
		linger.Discard(w, orig)
		return nil, true, err
	}
	return data, false, err
}

// readBody decodes one JSON object into v: capped, strict (unknown fields
// and trailing data refused). An empty body is allowed when optional.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, v any, optional bool) bool {
	data, tooLarge, err := s.readCapped(w, r, s.cfg.MaxBodyBytes, perr.DelegationRequestInvalid)
	if tooLarge {
		return false
	}
	if err != nil {
		s.fail(w, perr.DelegationRequestInvalid, "The request body could not be read")
		return false
	}
	if optional && len(strings.TrimSpace(string(data))) == 0 {
		return true
	}
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil || d.More() || !unambiguous(data, v) {
		s.fail(w, perr.DelegationRequestInvalid, "The request body is not the expected JSON object")
		return false
	}
	if !cleanJSON(data) {
		s.fail(w, perr.DelegationRequestInvalid, "The request body holds bytes that are not text (invalid UTF-8 or NUL)")
		return false
	}
	return true
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// isOperator compares the bearer's digest with every operator key's in
// constant time.
func (s *Server) isOperator(r *http.Request) bool {
	b := bearer(r)
	if b == "" {
		return false
	}
	d := sha256.Sum256([]byte(b))
	ok := 0
	for i := range s.opDigests {
		ok |= subtle.ConstantTimeCompare(d[:], s.opDigests[i][:])
	}
	return ok == 1
}

func (s *Server) operator(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.isOperator(r) {
			s.fail(w, perr.DelegationCredentialInvalid, "An operator key is required")
			return
		}
		h(w, r)
	}
}
