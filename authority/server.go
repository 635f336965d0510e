package authority

import (
	"context"
	"crypto/ed25519"
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
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/ratelimit"
	"github.com/pling-go/pling/runtime"
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
	// VerificationURI is where a person enters the user code.
	VerificationURI string
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
	Now             func() time.Time
	Logger          *slog.Logger
}

// Server is the authority's HTTP handler.
type Server struct {
	cfg       Config
	opDigests [][sha256.Size]byte
	mux       *http.ServeMux

	mu      sync.Mutex
	revoked chan struct{} // closed and replaced on each revocation here

	storeErrors prometheus.Counter
	cont        continuity
	requestsGC  atomic.Int64      // when a consume last dropped expired records
	createLimit ratelimit.Limiter // per client IP; nil: off
	limited     prometheus.Counter
	waiters     atomic.Int64 // long-polls parked on the feed now
	waitersG    prometheus.GaugeFunc
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
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, revoked: make(chan struct{}), storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pling_authority_store_errors_total", Help: "Store calls that failed."}), cont: newContinuity(),
		createLimit: newCreateLimit(cfg),
		limited: prometheus.NewCounter(prometheus.CounterOpts{Name: "pling_authority_rate_limited_total",
			Help: "Delegation requests refused by the per-address rate limit."})}
	s.waitersG = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pling_authority_feed_waiters",
		Help: "Revocation feed long-polls parked on this instance now."}, func() float64 { return float64(s.waiters.Load()) })
	for _, k := range cfg.OperatorKeys {
		if k != "" {
			s.opDigests = append(s.opDigests, sha256.Sum256([]byte(k)))
		}
	}
	keys, err := cfg.Store.Keys(ctx, s.nowMs())
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
	m.HandleFunc("POST /v1/sessions/{id}/requests/{rid}", s.consumeRequest)
	m.HandleFunc("PUT /v1/sessions/{id}/requests/{rid}/complete", s.completeRequest)
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
	if s.cors(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) nowMs() int64 { return s.cfg.Now().UnixMilli() }

func activeKey(keys []SigningKey) *SigningKey {
	for i := range keys {
		if keys[i].RetiredMs == 0 {
			return &keys[i]
		}
	}
	return nil
}

func (s *Server) addKey(ctx context.Context) error {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	return s.cfg.Store.AddKey(ctx, SigningKey{Kid: "k" + randomID(9), PrivateKey: priv, CreatedMs: s.nowMs()})
}

// Rotate retires the signing key and starts a new one. The retired key
// stays published until the last token it can have signed expires.
func (s *Server) Rotate(ctx context.Context) error {
	now := s.nowMs()
	if err := s.cfg.Store.RetireKeys(ctx, now, now+s.cfg.MaxTokenTTL.Milliseconds()); err != nil {
		return err
	}
	return s.addKey(ctx)
}

var b64 = base64.RawURLEncoding

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b64.EncodeToString(b)
}

const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

func userCode() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	out := make([]byte, 0, 9)
	for i, c := range b {
		if i == 4 {
			out = append(out, '-')
		}
		out = append(out, userCodeAlphabet[int(c)%len(userCodeAlphabet)])
	}
	return string(out)
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

// readBody decodes one JSON object into v: capped, strict (unknown fields
// and trailing data refused). An empty body is allowed when optional.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, v any, optional bool) bool {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	data, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		s.failStatus(w, http.StatusRequestEntityTooLarge, perr.DelegationRequestInvalid, "The request body is too large")
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

// covered reports whether every pattern of scope is within allowed: its
// literal text matches an allowed glob (a '*' of scope can only be
// consumed by a '*' of allowed, so every expansion is covered too).
func covered(allowed, scope []string) bool {
	for _, p := range scope {
		if !runtime.MatchAny(allowed, p) {
			return false
		}
	}
	return true
}

func validScope(scope []string) bool {
	if len(scope) == 0 || len(scope) > 64 {
		return false
	}
	for _, p := range scope {
		if p == "" || len(p) > 256 {
			return false
		}
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-:@*/", c) >= 0) {
				return false
			}
		}
	}
	return true
}

type createReq struct {
	Audience   string   `json:"audience"`
	Scope      []string `json:"scope"`
	TTLSeconds int64    `json:"ttlSeconds"`
	Agent      string   `json:"agent"`
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	if s.createLimit != nil {
		if ok, retry := s.createLimit.Allow(clientIP(r)); !ok {
			s.rateLimited(w, int64((retry+time.Millisecond-1)/time.Millisecond))
			return
		}
	}
	var req createReq
	if !s.readBody(w, r, &req, false) {
		return
	}
	maxTTL := int64(s.cfg.MaxTokenTTL / time.Second)
	switch {
	case !validScope(req.Scope):
		s.fail(w, perr.DelegationRequestInvalid, "scope must be 1–64 well-formed patterns")
		return
	case req.TTLSeconds <= 0 || req.TTLSeconds > maxTTL:
		s.fail(w, perr.DelegationRequestInvalid, "ttlSeconds must be between 1 and "+strconv.FormatInt(maxTTL, 10))
		return
	case req.Agent == "" || len(req.Agent) > 256:
		s.fail(w, perr.DelegationRequestInvalid, "agent must be 1–256 characters")
		return
	}
	if _, ok := s.cfg.Audiences[req.Audience]; !ok {
		s.fail(w, perr.DelegationBindingMismatch, "The authority does not issue for this audience")
		return
	}
	secret := randomID(32)
	sd := sha256.Sum256([]byte(secret))
	now := s.nowMs()
	d := Delegation{ID: randomID(16), UserCode: userCode(), PollSecretDigest: sd[:], Audience: req.Audience,
		Scope: req.Scope, Agent: req.Agent, TTLMs: req.TTLSeconds * 1000, CreatedMs: now,
		ExpiresMs: now + s.cfg.PendingTTL.Milliseconds()}
	if err := s.cfg.Store.CreateDelegation(r.Context(), d); err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": d.ID, "userCode": d.UserCode,
		"verificationUri": s.cfg.VerificationURI, "pollSecret": secret,
		"intervalSeconds": s.intervalSeconds(), "expiresAt": time.UnixMilli(d.ExpiresMs).UTC().Format(time.RFC3339)})
}

func (s *Server) intervalSeconds() int64 {
	return int64((s.cfg.Interval + time.Second - 1) / time.Second)
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (Delegation, bool) {
	d, err := s.cfg.Store.Delegation(r.Context(), r.PathValue("id"))
	if errors.Is(err, ErrNotFound) {
		s.fail(w, perr.DelegationNotFound, "No such delegation")
		return d, false
	}
	if err != nil {
		s.internal(w, r, err)
		return d, false
	}
	if d.Status == StatusPending && s.nowMs() >= d.ExpiresMs {
		d.Status = StatusExpired
	}
	return d, true
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	d, ok := s.lookup(w, r)
	if ok {
		s.writeDelegation(w, d)
	}
}

// byUserCode is GET /v1/delegations?userCode=CODE: what a consent screen
// calls with the code the person typed or followed a link with.
func (s *Server) byUserCode(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("userCode")
	if code == "" || len(code) > 64 {
		s.fail(w, perr.DelegationRequestInvalid, "userCode is required")
		return
	}
	d, err := s.cfg.Store.DelegationByUserCode(r.Context(), code)
	if errors.Is(err, ErrNotFound) {
		s.fail(w, perr.DelegationNotFound, "No such delegation")
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if d.Status == StatusPending && s.nowMs() >= d.ExpiresMs {
		d.Status = StatusExpired
	}
	s.writeDelegation(w, d)
}

func (s *Server) writeDelegation(w http.ResponseWriter, d Delegation) {
	scope := d.Scope
	if d.ApprovedScope != nil {
		scope = d.ApprovedScope
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": d.ID, "audience": d.Audience, "scope": scope,
		"agent": d.Agent, "status": d.Status, "expiresAt": time.UnixMilli(d.ExpiresMs).UTC().Format(time.RFC3339)})
}

type decideReq struct {
	Scope   []string `json:"scope,omitempty"`
	Subject string   `json:"subject,omitempty"`
}

func (s *Server) decide(status string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req decideReq
		if !s.readBody(w, r, &req, true) {
			return
		}
		d, ok := s.lookup(w, r)
		if !ok {
			return
		}
		scope := d.Scope
		if req.Scope != nil {
			if !validScope(req.Scope) || !covered(d.Scope, req.Scope) {
				s.fail(w, perr.DelegationRequestInvalid, "The scope may only narrow the requested scope")
				return
			}
			scope = req.Scope
		}
		switch d.Status {
		case StatusExpired:
			s.fail(w, perr.DelegationExpired, "The delegation expired")
			return
		case StatusPending:
		default:
			if d.Status == status {
				writeJSON(w, http.StatusOK, map[string]string{"status": d.Status})
				return
			}
			s.fail(w, perr.DelegationRevoked, "The delegation was decided already")
			return
		}
		err := s.cfg.Store.Decide(r.Context(), d.ID, status, scope, s.nowMs())
		if errors.Is(err, ErrConflict) {
			s.fail(w, perr.DelegationRevoked, "The delegation was decided already")
			return
		}
		if err != nil {
			s.internal(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": status})
	}
}

type tokenReq struct {
	PollSecret string `json:"pollSecret"`
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	var req tokenReq
	if !s.readBody(w, r, &req, false) {
		return
	}
	d, ok := s.lookup(w, r)
	if !ok {
		return
	}
	sd := sha256.Sum256([]byte(req.PollSecret))
	if subtle.ConstantTimeCompare(sd[:], d.PollSecretDigest) != 1 || d.SessionID != "" {
		// A spent poll secret is no credential any more.
		s.fail(w, perr.DelegationCredentialInvalid, "The poll secret is not valid")
		return
	}
	now := s.nowMs()
	switch {
	case d.Status == StatusDenied:
		s.fail(w, perr.DelegationRevoked, "The delegation was denied")
		return
	case d.Status == StatusExpired || now >= d.ExpiresMs:
		s.fail(w, perr.DelegationExpired, "The delegation expired")
		return
	case d.Status == StatusPending:
		prev, err := s.cfg.Store.Poll(r.Context(), d.ID, now)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		status := "pending"
		if prev != 0 && now-prev < s.cfg.Interval.Milliseconds() {
			status = "slow_down"
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"status": status, "intervalSeconds": s.intervalSeconds()})
		return
	}
	if !covered(s.cfg.Audiences[d.Audience], d.ApprovedScope) {
		s.fail(w, perr.DelegationBindingMismatch, "The scope is wider than the audience allows")
		return
	}
	keys, err := s.cfg.Store.Keys(r.Context(), now)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	k := activeKey(keys)
	if k == nil {
		s.internal(w, r, errors.New("no active signing key"))
		return
	}
	sessionID := randomID(16)
	exp := now + d.TTLMs
	tok, err := sign(k, runtime.Claims{Subject: d.Agent, Audience: d.Audience, Scope: d.ApprovedScope,
		IssuedAtMs: now, ExpiresAtMs: exp, ID: sessionID})
	if err != nil {
		s.internal(w, r, err)
		return
	}
	td := sha256.Sum256([]byte(tok))
	err = s.cfg.Store.Collect(r.Context(), d.ID, Session{ID: sessionID, DelegationID: d.ID, TokenDigest: td[:],
		Audience: d.Audience, ExpiresMs: exp})
	if errors.Is(err, ErrConflict) {
		s.fail(w, perr.DelegationCredentialInvalid, "The poll secret is not valid")
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"token": tok, "sessionId": sessionID,
		"expiresAt": time.UnixMilli(exp).UTC().Format(time.RFC3339)})
}

// sign makes a pl1 token: pl1.<kid>.<payload>.<signature>.
func sign(k *SigningKey, c runtime.Claims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	head := "pl1." + k.Kid + "." + b64.EncodeToString(payload)
	sig := ed25519.Sign(ed25519.PrivateKey(k.PrivateKey), []byte(head))
	return head + "." + b64.EncodeToString(sig), nil
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	operator := s.isOperator(r)
	se, err := s.cfg.Store.Session(r.Context(), r.PathValue("id"))
	if errors.Is(err, ErrNotFound) {
		if !operator { // tell nobody else which session ids exist
			s.fail(w, perr.DelegationCredentialInvalid, "An operator key or the session's token is required")
			return
		}
		s.fail(w, perr.DelegationNotFound, "No such session")
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if !operator {
		td := sha256.Sum256([]byte(bearer(r)))
		if bearer(r) == "" || subtle.ConstantTimeCompare(td[:], se.TokenDigest) != 1 {
			s.fail(w, perr.DelegationCredentialInvalid, "An operator key or the session's token is required")
			return
		}
	}
	if err := s.cfg.Store.Revoke(r.Context(), se.ID, s.nowMs()); err != nil {
		s.internal(w, r, err)
		return
	}
	s.mu.Lock()
	close(s.revoked)
	s.revoked = make(chan struct{})
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"status": "revoked"})
}

// rotate is the operator's key rotation: the signing key is retired (still
// published until the last token it can have signed expires) and a new
// one signs from now on. The answer is the keys as GET /v1/keys lists
// them, never cached.
func (s *Server) rotate(w http.ResponseWriter, r *http.Request) {
	if err := s.Rotate(r.Context()); err != nil {
		s.internal(w, r, err)
		return
	}
	s.cfg.Logger.Info("signing key rotated")
	s.writeKeys(w, r, "no-store")
}

func (s *Server) keys(w http.ResponseWriter, r *http.Request) {
	s.writeKeys(w, r, "public, max-age=60")
}

func (s *Server) writeKeys(w http.ResponseWriter, r *http.Request, cache string) {
	keys, err := s.cfg.Store.Keys(r.Context(), s.nowMs())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		e := map[string]any{"kid": k.Kid, "alg": "Ed25519",
			"publicKey": b64.EncodeToString(ed25519.PrivateKey(k.PrivateKey).Public().(ed25519.PublicKey))}
		if k.NotAfterMs != 0 {
			e["notAfter"] = time.UnixMilli(k.NotAfterMs).UTC().Format(time.RFC3339)
		} else {
			e["notAfter"] = nil
		}
		out = append(out, e)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", cache)
	_ = json.NewEncoder(w).Encode(map[string]any{"keys": out})
}

// revocations is the feed: entries after the cursor, waiting up to
// waitSeconds (capped by MaxWait) for one when there is none. A
// revocation on this instance wakes the wait at once; one on another
// instance sharing the store is seen within a second.
func (s *Server) revocations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, wait := int64(0), int64(0)
	var err error
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			s.fail(w, perr.DelegationRequestInvalid, "after must be a cursor")
			return
		}
	}
	if v := q.Get("waitSeconds"); v != "" {
		if wait, err = strconv.ParseInt(v, 10, 64); err != nil || wait < 0 {
			s.fail(w, perr.DelegationRequestInvalid, "waitSeconds must be a non-negative integer")
			return
		}
	}
	d := time.Duration(min(wait, int64(s.cfg.MaxWait/time.Second)+1)) * time.Second // no overflow
	d = min(d, s.cfg.MaxWait)
	if d > 0 {
		if s.waiters.Add(1) > int64(s.cfg.MaxFeedWaiters) {
			s.waiters.Add(-1)
			w.Header().Set("Retry-After", "1")
			s.failStatus(w, http.StatusServiceUnavailable, perr.DelegationInternal, "Too many polls are waiting here; retry")
			return
		}
		defer s.waiters.Add(-1)
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.revoked
		s.mu.Unlock()
		list, err := s.cfg.Store.Revocations(r.Context(), after, 1000)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		if len(list) > 0 || d == 0 {
			cursor := after
			out := make([]map[string]any, 0, len(list))
			for _, e := range list {
				cursor = e.Cursor
				out = append(out, map[string]any{"sessionId": e.SessionID, "at": time.UnixMilli(e.AtMs).UTC().Format(time.RFC3339Nano)})
			}
			writeJSON(w, http.StatusOK, map[string]any{"cursor": strconv.FormatInt(cursor, 10), "revoked": out})
			return
		}
		select {
		case <-ch:
		case <-time.After(time.Second):
		case <-deadline.C:
			d = 0
		case <-r.Context().Done():
			return
		}
	}
}
