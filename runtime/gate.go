package runtime

import (
	"context"
	"errors"
	"strings"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"
)

// The gate stands between an agent and page code: steps 6–9 of the check
// order of docs/protocol.md §3.3 — session, rate limit, replay guard, exposure — in
// that order, failing closed. Nothing here runs page code.

// gateSession is a verified session (or the anonymous page session).
type gateSession struct {
	schema.SurfaceSession
	// key identifies the session for rate limits, the replay guard, loop
	// detection and resume tokens: a digest of the token, never the token.
	key       string
	anonymous bool
}

// Key returns the session's opaque key (a digest of its token).
func (s *gateSession) Key() string { return s.key }

// Anonymous reports a request without a session.
func (s *gateSession) Anonymous() bool { return s.anonymous }

// SessionVerifier turns a session token into a verified session. It
// reports a bad token with a *perr.Error of code SESSION_INVALID,
// SESSION_EXPIRED or SESSION_REVOKED; any other error is a failure of the
// verifier, answered with INTERNAL_ERROR (fail closed).
type SessionVerifier interface {
	Verify(ctx context.Context, token string, nowMs int64) (schema.SurfaceSession, error)
}

// SessionVerifierFunc adapts a function to SessionVerifier.
type SessionVerifierFunc func(ctx context.Context, token string, nowMs int64) (schema.SurfaceSession, error)

// Verify implements SessionVerifier.
func (f SessionVerifierFunc) Verify(ctx context.Context, token string, nowMs int64) (schema.SurfaceSession, error) {
	return f(ctx, token, nowMs)
}

// clockSkew is the allowance for a session's not-before time.
const clockSkew = 30 * time.Second

// clockSkewMs is clockSkew in the clock's milliseconds.
const clockSkewMs = int64(clockSkew / time.Millisecond)

type gateConfig struct {
	expose          []string
	anonymous       []string // WithAnonymous; see anonymousScope
	anonymousSet    bool
	sessionRequired bool
	verifier        SessionVerifier
	limiter         Limiter
	guard           ReplayGuard
	shared          ReplayGuard
	audit           AuditSink
	origin          string
	subject         func(context.Context) (string, error) // WithSubject
}

func defaultGateConfig() gateConfig {
	return gateConfig{limiter: NewTokenBucketLimiter(DefaultRateLimit())}
}

// WithExpose sets the site allowlist: glob patterns ('*' matches any run of
// characters) of the capability ids (folded ids for row actions) agents may
// see and invoke. Without it nothing is exposed: the gate fails closed.
func WithExpose(patterns ...string) Option {
	return func(cfg *config) { cfg.gate.expose = append([]string(nil), patterns...) }
}

// WithSessions sets the session verifier, and whether every request must
// carry a session.
func WithSessions(v SessionVerifier, required bool) Option {
	return func(cfg *config) { cfg.gate.verifier, cfg.gate.sessionRequired = v, required }
}

// WithSubject ties a session to the person signed in on the site: for
// every request that carries a session, signedIn(ctx) names that person
// (the site's own user id, as the authority's operator put it in the
// token's sub), and a session whose subject is another — or any session,
// when signedIn answers "" or an error — is refused with SESSION_INVALID
// before anything is described or run. A token for Bob in a browser
// signed in as Alice is Bob's agent, not Alice's. Requests without a
// session are not affected.
func WithSubject(signedIn func(ctx context.Context) (string, error)) Option {
	return func(cfg *config) { cfg.gate.subject = signedIn }
}

// WithAnonymous sets the anonymous allowlist: the patterns a request
// without a session may reach, within the site allowlist (exposure for
// anonymous callers is WithExpose ∩ WithAnonymous). Without it, anonymous
// callers reach the whole site allowlist when no verifier is configured,
// and nothing once WithSessions sets one: a caller who drops a narrow
// token must not reach more than the token allowed (RATIONALE.md "Why do
// anonymous callers get nothing once sessions are configured?").
// WithAnonymous() with no patterns exposes nothing to anonymous callers.
func WithAnonymous(patterns ...string) Option {
	return func(cfg *config) {
		cfg.gate.anonymous, cfg.gate.anonymousSet = append([]string{}, patterns...), true
	}
}

// anonymousScope is the scope of the anonymous session.
func (gc *gateConfig) anonymousScope() []string {
	switch {
	case gc.anonymousSet:
		return gc.anonymous
	case gc.verifier != nil:
		return nil
	}
	return []string{"*"}
}

// WithLimiter replaces the rate limiter. A limiter that fails is answered
// with RATE_LIMIT_UNAVAILABLE (fail closed).
func WithLimiter(l Limiter) Option { return func(cfg *config) { cfg.gate.limiter = l } }

// WithReplayGuard replaces the replay guard. A guard that fails is
// answered with REPLAY_GUARD_UNAVAILABLE (fail closed).
func WithReplayGuard(g ReplayGuard) Option { return func(cfg *config) { cfg.gate.guard = g } }

// WithSharedReplayGuard adds a second replay guard, one that outlives the
// page: a store shared by the origin's tabs, or an authority's record
// (docs/protocol.md §3.6.4). An invoke of a capability that can change something
// (risk write or destructive, or an id the page does not declare) consumes
// its id there too, after the page's own guard, so that one id runs at
// most once across reloads and tabs; describe and read invokes do not pay
// for it. It fails closed like the first: an error is
// REPLAY_GUARD_UNAVAILABLE, and the id stays free to be sent again.
func WithSharedReplayGuard(g ReplayGuard) Option { return func(cfg *config) { cfg.gate.shared = g } }

// WithAudit sets the sink of the audit events: one per request, metadata
// only.
func WithAudit(s AuditSink) Option { return func(cfg *config) { cfg.gate.audit = s } }

// WithOrigin sets the page origin that session tokens must be bound to.
func WithOrigin(origin string) Option { return func(cfg *config) { cfg.gate.origin = origin } }

type gate struct {
	cfg       *config
	anonScope []string // the anonymous session's scope, fixed at New
}

func newGate(cfg *config) *gate {
	if cfg.gate.guard == nil {
		cfg.gate.guard = NewMemoryReplayGuard(DefaultReplayCapacity, DefaultReplaySessionCapacity)
	}
	return &gate{cfg: cfg, anonScope: cfg.gate.anonymousScope()}
}

// anonymousKey is the session key of every request without a session.
const anonymousKey = "anonymous"

// AnonymousSessionKey is the session key a ReplayGuard is called with for
// a request without a session. A custom guard (WithReplayGuard,
// WithSharedReplayGuard) needs it to keep those requests apart: a shared
// guard has no session to send them under (authority/follow keeps them in
// the page's own guard).
const AnonymousSessionKey = anonymousKey

// anonRetentionMs is how long an anonymous request id stays consumed.
const anonRetentionMs = 24 * 60 * 60 * 1000

// session is step 6, at now.
func (g *gate) session(ctx context.Context, req *wire.Request, now int64) (*gateSession, *perr.Error) {
	gc := &g.cfg.gate
	if !req.HasSession {
		if gc.sessionRequired {
			return nil, perr.New(perr.SessionRequired, "", nil)
		}
		return &gateSession{SurfaceSession: schema.SurfaceSession{Scope: g.anonScope, ExpiresAtMs: now + anonRetentionMs},
			key: anonymousKey, anonymous: true}, nil
	}
	if gc.verifier == nil || req.Session == "" {
		return nil, perr.New(perr.SessionInvalid, "", nil)
	}
	// The token's digest keys the session; the built-in verifier's cache
	// uses the same digest, so it is computed once and handed to it, and
	// a cache hit gives the session ready-made.
	sum := tokenDigest(req.Session)
	var sess *gateSession
	if tv, ok := gc.verifier.(*TokenVerifier); ok {
		e, err := tv.verify(ctx, req.Session, sum, now)
		if err != nil {
			return nil, sessionError(err)
		}
		sess = e.sess
	} else {
		ss, err := gc.verifier.Verify(ctx, req.Session, now)
		if err != nil {
			return nil, sessionError(err)
		}
		sess = &gateSession{SurfaceSession: ss, key: sessionKey(&sum)}
	}
	switch ss := &sess.SurfaceSession; {
	case ss.Revoked:
		return nil, perr.New(perr.SessionRevoked, "", nil)
	case ss.ExpiresAtMs <= 0:
		return nil, perr.New(perr.SessionInvalid, "The session has no expiry", nil)
	case now >= ss.ExpiresAtMs:
		return nil, perr.New(perr.SessionExpired, "", nil)
	case ss.NotBeforeMs > now+clockSkewMs:
		return nil, perr.New(perr.SessionInvalid, "The session is not valid yet", nil)
	case gc.origin != "" && ss.Audience != gc.origin:
		return nil, perr.New(perr.SessionInvalid, "The session is bound to another origin", nil)
	}
	if gc.subject != nil {
		who, err := gc.subject(ctx)
		if err != nil || who == "" || who != sess.Subject {
			return nil, perr.New(perr.SessionInvalid, "The session is for another person than the one signed in on this page", nil)
		}
	}
	return sess, nil
}

// sessionError is the protocol error for a verifier's failure: its own
// session code, or INTERNAL_ERROR for anything else (never its message).
func sessionError(err error) *perr.Error {
	var pe *perr.Error
	if errors.As(err, &pe) {
		switch pe.Code() {
		case perr.SessionInvalid, perr.SessionExpired, perr.SessionRevoked:
			return perr.New(pe.Code(), "", nil)
		}
	}
	return perr.New(perr.InternalError, "The session could not be verified", nil)
}

// exposureOf is the site allowlist ∩ the session scope.
func (g *gate) exposureOf(s *gateSession) exposure {
	return &patternExposure{site: g.cfg.gate.expose, scope: s.Scope}
}

type patternExposure struct {
	site, scope []string
	k           string
}

func (e *patternExposure) allows(id string) bool {
	return MatchAny(e.site, id) && MatchAny(e.scope, id)
}

func (e *patternExposure) key() string {
	if e.k == "" {
		e.k = strings.Join(e.site, "\x00") + "\x01" + strings.Join(e.scope, "\x00")
	}
	return e.k
}

// MatchAny reports whether id matches one of the glob patterns.
func MatchAny(patterns []string, id string) bool {
	for _, p := range patterns {
		if Match(p, id) {
			return true
		}
	}
	return false
}

// Match reports whether id matches the glob pattern: '*' matches any run of
// characters (including none, and across '.', '@' and ':'); every other
// character matches itself. It runs in O(len(p)·len(id)) at worst.
func Match(p, id string) bool {
	// Iterative glob with one backtrack point: linear for most patterns,
	// never exponential.
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(id) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(p) && p[pi] == id[si]:
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
