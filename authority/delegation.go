// The delegation endpoints: create, get, look up by user code, decide, and exchange for a token.

package authority

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/idchars"
	"github.com/pling-go/pling/runtime"
)

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
		if !idchars.Of(p, 1, 256, "._-:@*/") {
			return false
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
	if !s.allowCreate(w, r) {
		return
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
	case !validText(req.Agent, 256):
		s.fail(w, perr.DelegationRequestInvalid, "agent must be 1–256 bytes of text without control characters")
		return
	}
	if _, ok := s.cfg.Audiences[req.Audience]; !ok {
		s.fail(w, perr.DelegationBindingMismatch, "The authority does not issue for this audience")
		return
	}
	client := s.forwardedClient(r)
	if full, err := s.pendingFromFull(r.Context(), client); err != nil {
		s.internal(w, r, err)
		return
	} else if full {
		s.pendingRefused(w, "Too many delegations asked from this address wait for consent")
		return
	}
	if full, err := s.pendingFull(r.Context(), req.Audience); err != nil {
		s.internal(w, r, err)
		return
	} else if full {
		s.pendingRefused(w, "Too many delegations wait for consent for this audience")
		return
	}
	secret := randomID(32)
	sd := sha256.Sum256([]byte(secret))
	now := s.nowMs()
	d := Delegation{ID: randomID(16), UserCode: userCode(), PollSecretDigest: sd[:], Audience: req.Audience,
		Scope: req.Scope, Agent: req.Agent, TTLMs: req.TTLSeconds * 1000, CreatedMs: now,
		ExpiresMs: now + s.cfg.PendingTTL.Milliseconds(), Client: client}
	if err := s.cfg.Store.CreateDelegation(r.Context(), d); err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": d.ID, "userCode": d.UserCode,
		"verificationUri": s.verificationURI(r), "pollSecret": secret,
		"intervalSeconds": s.intervalSeconds(), "expiresAt": time.UnixMilli(d.ExpiresMs).UTC().Format(time.RFC3339)})
}

// verificationURI is Config.VerificationURI, or the authority's own
// consent screen at the scheme and host the agent reached it by (an agent
// that names another host only misleads itself).
func (s *Server) verificationURI(r *http.Request) string {
	if s.cfg.VerificationURI != "" {
		return s.cfg.VerificationURI
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + ConsentPath
}

func (s *Server) intervalSeconds() int64 {
	return int64((s.cfg.Interval + time.Second - 1) / time.Second)
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (Delegation, bool) {
	d, err := s.cfg.Store.Delegation(r.Context(), r.PathValue("id"))
	if s.refused(w, r, err, ErrNotFound, perr.DelegationNotFound, "No such delegation") {
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
	if s.refused(w, r, err, ErrNotFound, perr.DelegationNotFound, "No such delegation") {
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
		if status == StatusApproved && !validText(req.Subject, 256) {
			// The subject is the person who consented (the token's sub,
			// the owner of continuity tasks); never the agent's name.
			s.fail(w, perr.DelegationRequestInvalid, "subject (the person who consented) must be 1–256 bytes of text without control characters")
			return
		}
		if status != StatusApproved {
			req.Subject = ""
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
		err := s.cfg.Store.Decide(r.Context(), d.ID, status, scope, req.Subject, s.nowMs())
		if s.refused(w, r, err, ErrConflict, perr.DelegationRevoked, "The delegation was decided already") {
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": status})
	}
}

type tokenReq struct {
	PollSecret string `json:"pollSecret"`
}

// pollSecret checks the poll secret a collector sent against the digest
// kept for it; a spent one (or one of no record) is no credential any
// more. A refusal is answered.
func (s *Server) pollSecret(w http.ResponseWriter, secret string, digest []byte, spent bool) bool {
	sd := sha256.Sum256([]byte(secret))
	if spent || subtle.ConstantTimeCompare(sd[:], digest) != 1 {
		s.fail(w, perr.DelegationCredentialInvalid, "The poll secret is not valid")
		return false
	}
	return true
}

// closed answers the collection of a grant a person denied
// (DELEGATION_REVOKED) or that expired (DELEGATION_EXPIRED), in that order,
// and reports whether it was either.
func (s *Server) closed(w http.ResponseWriter, denied, expired bool, deniedMsg, expiredMsg string) bool {
	switch {
	case denied:
		s.fail(w, perr.DelegationRevoked, deniedMsg)
	case expired:
		s.fail(w, perr.DelegationExpired, expiredMsg)
	default:
		return false
	}
	return true
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
	if !s.pollSecret(w, req.PollSecret, d.PollSecretDigest, d.SessionID != "") {
		return
	}
	now := s.nowMs()
	if s.closed(w, d.Status == StatusDenied, d.Status == StatusExpired || now >= d.ExpiresMs, "The delegation was denied", "The delegation expired") {
		return
	}
	if d.Status == StatusPending {
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
	if d.Subject == "" {
		// Approved before approvals named a subject: no token for it.
		s.fail(w, perr.DelegationRevoked, "The delegation was approved without a subject; ask again")
		return
	}
	if !covered(s.cfg.Audiences[d.Audience], d.ApprovedScope) {
		s.fail(w, perr.DelegationBindingMismatch, "The scope is wider than the audience allows")
		return
	}
	k, err := s.signingKey(r.Context(), now)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	sessionID := randomID(16)
	exp := now + d.TTLMs
	tok, err := sign(k, runtime.Claims{Subject: d.Subject, Audience: d.Audience, Scope: d.ApprovedScope,
		IssuedAtMs: now, ExpiresAtMs: exp, ID: sessionID, Agent: d.Agent})
	if err != nil {
		s.internal(w, r, err)
		return
	}
	td := sha256.Sum256([]byte(tok))
	err = s.cfg.Store.Collect(r.Context(), d.ID, Session{ID: sessionID, DelegationID: d.ID, TokenDigest: td[:],
		Audience: d.Audience, ExpiresMs: exp})
	if s.refused(w, r, err, ErrConflict, perr.DelegationCredentialInvalid, "The poll secret is not valid") {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"token": tok, "sessionId": sessionID,
		"expiresAt": time.UnixMilli(exp).UTC().Format(time.RFC3339)})
}
