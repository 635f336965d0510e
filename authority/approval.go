package authority

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"time"
	"unicode/utf8"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// Approvals given outside the page (docs/authority.md "Approvals"): a
// delegated session's page sends what it asks a person to approve — the
// binding's fields in the clear (runtime.ApprovalRequest) and its own
// words for them — to its authority, which computes the binding itself
// and shows the person those same fields on its own screen
// (screen_approval.go); the page collects, once, an approval the
// authority signed for that binding and accepts it only for the binding
// it computed for what it is about to run
// (runtime.TokenVerifier.VerifyApproval). A page script or an agent in
// the page can forge a click or rewrite what is sent, but not a
// signature for the request the page runs.

// Approval is one approval challenge at the authority.
type Approval struct {
	ID               string
	PollSecretDigest []byte
	Audience         string // the page's origin
	SessionID        string // the delegated session that asks
	Binding          string // the SurfaceApprovalBinding's digest, computed here
	// Challenge is what the screen shows (JSON, approvalShown): the
	// request the binding was computed from, and the page's words.
	Challenge string
	Status    string // pending, approved, denied
	CreatedMs int64
	ExpiresMs int64
	Collected bool
	// Passkey is the assertion (the credential's JSON) that approved it,
	// for an approval its site requires a passkey for (passkey.go).
	Passkey string
}

// ApprovalStore keeps approvals. The SQL store (SQLite and PostgreSQL)
// implements it; a Server whose Store does not refuses the routes.
type ApprovalStore interface {
	// CreateApproval stores a; ErrFull when a.SessionID holds
	// maxPerSession unexpired approvals at a.CreatedMs.
	CreateApproval(ctx context.Context, a Approval, maxPerSession int64) error
	// Approval returns one; ErrNotFound when there is none.
	Approval(ctx context.Context, id string) (Approval, error)
	// DecideApproval moves a pending, unexpired approval to status;
	// ErrConflict when it is not pending any more or has expired.
	DecideApproval(ctx context.Context, id, status string, nowMs int64) error
	// CollectApproval marks an approved approval collected, exactly once;
	// ErrConflict when it was collected already or is not approved.
	CollectApproval(ctx context.Context, id string) error
}

// Bounds of an approval request.
const (
	maxApprovalTTLMs = 10 * 60 * 1000 // an approval waits at most 10 minutes
	maxSummaryChars  = 2000           // of the page's bound summary
	// DefaultMaxApprovalsPerSession bounds the unexpired approvals one
	// session holds.
	DefaultMaxApprovalsPerSession = 20
	// Defaults of the per-address limit on POST /v1/approvals.
	DefaultApprovalBurst     = 20
	DefaultApprovalPerSecond = 0.2
)

var bindingDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func (s *sqlStore) CreateApproval(ctx context.Context, a Approval, maxPerSession int64) error {
	tx, ctx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO approvals
		(id, poll_secret_digest, audience, session_id, binding, challenge, status, created_ms, expires_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.PollSecretDigest, a.Audience, a.SessionID, a.Binding, a.Challenge, StatusPending, a.CreatedMs, a.ExpiresMs); err != nil {
		return err
	}
	// Counted after the insert, in its transaction: a session over its
	// bound rolls its own insert back. Concurrent creates of one session
	// may each miss the other's row (read committed), so the bound holds
	// up to the session's concurrency, which the per-address limit keeps
	// small.
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM approvals WHERE session_id = ? AND expires_ms > ?`,
		a.SessionID, a.CreatedMs).Scan(&n); err != nil {
		return err
	}
	if n > maxPerSession {
		return ErrFull
	}
	return tx.Commit()
}

func (s *sqlStore) Approval(ctx context.Context, id string) (Approval, error) {
	var a Approval
	var collected int64
	err := s.db.QueryRowContext(ctx, `SELECT id, poll_secret_digest, audience, session_id, binding, challenge, status, created_ms, expires_ms, collected, passkey
		FROM approvals WHERE id = ?`, id).Scan(&a.ID, &a.PollSecretDigest, &a.Audience, &a.SessionID, &a.Binding, &a.Challenge, &a.Status,
		&a.CreatedMs, &a.ExpiresMs, &collected, &a.Passkey)
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, ErrNotFound
	}
	a.Collected = collected != 0
	return a, err
}

func (s *sqlStore) DecideApproval(ctx context.Context, id, status string, nowMs int64) error {
	r, err := s.db.ExecContext(ctx, `UPDATE approvals SET status = ?
		WHERE id = ? AND status = 'pending' AND expires_ms > ?`, status, id, nowMs)
	return oneRow(r, err)
}

func (s *sqlStore) CollectApproval(ctx context.Context, id string) error {
	r, err := s.db.ExecContext(ctx, `UPDATE approvals SET collected = 1
		WHERE id = ? AND status = 'approved' AND collected = 0`, id)
	return oneRow(r, err)
}

// routeApprovals adds the approval routes: the page's (create, collect;
// CORS for the authority's audiences) and the operator's (read, decide).
func (s *Server) routeApprovals(m *http.ServeMux) {
	m.HandleFunc("POST /v1/approvals", s.createApproval)
	m.HandleFunc("GET /v1/approvals/{id}", s.operator(s.getApproval))
	m.HandleFunc("POST /v1/approvals/{id}/approve", s.operator(s.decideApproval(StatusApproved)))
	m.HandleFunc("POST /v1/approvals/{id}/deny", s.operator(s.decideApproval(StatusDenied)))
	m.HandleFunc("POST /v1/approvals/{id}/token", s.collectApproval)
	m.HandleFunc("GET /v1/sessions/{id}/approvals/{aid}", s.sessionApproval)
}

func (s *Server) approvals(w http.ResponseWriter) (ApprovalStore, bool) {
	st, ok := s.raw.(ApprovalStore)
	if !ok {
		s.failStatus(w, http.StatusNotImplemented, perr.DelegationInternal, "This authority's store keeps no approvals")
	}
	return st, ok
}

// approvalBody is the approval store and the request's body read into
// req, in that order; false when either is refused (and answered).
func (s *Server) approvalBody(w http.ResponseWriter, r *http.Request, req any) (ApprovalStore, bool) {
	st, ok := s.approvals(w)
	return st, ok && s.readBody(w, r, req, false)
}

// approvalShown is what an approval's screen is rendered from: the
// request the binding was computed from, and the page's own words for it
// (its challenge: title, risk, reason, the agent's name, the record's
// label, the parameters' titles and order), which are shown as the
// page's, never as what runs.
type approvalShown struct {
	Request runtime.ApprovalRequest         `json:"request"`
	Page    schema.SurfaceApprovalChallenge `json:"page"`
}

// createApproval: POST /v1/approvals {sessionId, audience, request,
// challenge} with the session's own token as bearer → 201 {id,
// pollSecret, binding, expiresAtMs}. The session must be live and for the
// audience, and a browser's Origin must be the audience; the binding is
// computed here from request, never taken from the page. Limited per
// client address and per session.
func (s *Server) createApproval(w http.ResponseWriter, r *http.Request) {
	if !s.allowBy(w, r, s.approvalLimit, s.forwardedClient(r)) {
		return
	}
	var req struct {
		SessionID string                          `json:"sessionId"`
		Audience  string                          `json:"audience"`
		Request   runtime.ApprovalRequest         `json:"request"`
		Challenge schema.SurfaceApprovalChallenge `json:"challenge"`
	}
	st, ok := s.approvalBody(w, r, &req)
	if !ok {
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != req.Audience {
		// A page asks for its own origin only.
		s.fail(w, perr.DelegationAudienceMismatch, "The approval is for another origin than the page that asks")
		return
	}
	se, ok := s.sessionByBearer(w, r, req.SessionID)
	if !ok {
		return
	}
	now := s.nowMs()
	rq := req.Request
	switch {
	case !isOrigin(req.Audience) || se.Audience != req.Audience:
		s.fail(w, perr.DelegationAudienceMismatch, "The session is not for this audience")
		return
	case !validText(rq.Capability, 256) || !wire.ValidID(rq.RequestID) || !bindingDigest.MatchString(rq.Session) ||
		rq.Input == nil || utf8.RuneCountInString(rq.Summary) > maxSummaryChars:
		s.fail(w, perr.DelegationRequestInvalid, "request must name a capability, an input object, a session digest and a request id")
		return
	case rq.ExpiresAtMs <= now || rq.ExpiresAtMs > now+maxApprovalTTLMs || rq.ExpiresAtMs > se.ExpiresMs:
		s.fail(w, perr.DelegationRequestInvalid, "request.expiresAtMs must be in the next 10 minutes, within the session")
		return
	}
	if _, ok := s.cfg.Audiences[req.Audience]; !ok {
		s.fail(w, perr.DelegationAudienceMismatch, "The authority does not issue for this origin")
		return
	}
	binding, err := rq.Binding()
	if err != nil {
		s.fail(w, perr.DelegationRequestInvalid, "request.input is not JSON the binding can be computed over")
		return
	}
	// The page's challenge is kept for its words only; what it says of
	// the binding, the capability and the input is not used.
	shown, err := json.Marshal(approvalShown{Request: rq, Page: req.Challenge})
	if err != nil {
		s.fail(w, perr.DelegationRequestInvalid, "The request could not be kept")
		return
	}
	secret := randomID(32)
	sd := sha256.Sum256([]byte(secret))
	a := Approval{ID: randomID(16), PollSecretDigest: sd[:], Audience: req.Audience, SessionID: se.ID, Binding: binding,
		Challenge: string(shown), CreatedMs: now, ExpiresMs: rq.ExpiresAtMs}
	err = st.CreateApproval(r.Context(), a, s.cfg.MaxApprovalsPerSession)
	if errors.Is(err, ErrFull) {
		s.failStatus(w, http.StatusTooManyRequests, perr.RateLimited, "The session holds as many approvals as it may; wait for one to end")
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": a.ID, "pollSecret": secret, "binding": binding, "expiresAtMs": a.ExpiresMs})
}

// getApproval: GET /v1/approvals/{id} (operator) → what the screen shows.
func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	st, ok := s.approvals(w)
	if !ok {
		return
	}
	a, err := st.Approval(r.Context(), r.PathValue("id"))
	if s.refused(w, r, err, ErrNotFound, perr.DelegationNotFound, "No such approval") {
		return
	}
	status, shown := s.approvalNow(a)
	writeJSON(w, http.StatusOK, map[string]any{"id": a.ID, "audience": a.Audience, "sessionId": a.SessionID, "binding": a.Binding,
		"request": shown.Request, "page": shown.Page, "status": status, "expiresAtMs": a.ExpiresMs})
}

// approvalNow is an approval's status now (a pending one past its expiry
// is expired) and what its screen shows.
func (s *Server) approvalNow(a Approval) (string, approvalShown) {
	status := a.Status
	if status == StatusPending && s.nowMs() >= a.ExpiresMs {
		status = StatusExpired
	}
	var shown approvalShown
	_ = json.Unmarshal([]byte(a.Challenge), &shown)
	return status, shown
}

// sessionApproval: GET /v1/sessions/{id}/approvals/{aid} with the
// session's own token as bearer → 200 {id, capability, requestId, input,
// status, expiresAtMs}: what an approval of that session asks, so that an
// agent can tell whether the approval a page names is the one for the
// call it made before it asks its host to open the screen (a page script
// can name any approval id). Another session's approval, or none, is 404
// alike; the page's own words are not given.
func (s *Server) sessionApproval(w http.ResponseWriter, r *http.Request) {
	st, ok := s.approvals(w)
	if !ok {
		return
	}
	se, ok := s.sessionByBearer(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	a, err := st.Approval(r.Context(), r.PathValue("aid"))
	if err == nil && a.SessionID != se.ID {
		err = ErrNotFound
	}
	if s.refused(w, r, err, ErrNotFound, perr.DelegationNotFound, "No such approval of this session") {
		return
	}
	status, shown := s.approvalNow(a)
	writeJSON(w, http.StatusOK, map[string]any{"id": a.ID, "capability": shown.Request.Capability, "requestId": shown.Request.RequestID,
		"input": shown.Request.Input, "status": status, "expiresAtMs": a.ExpiresMs})
}

// decideApproval: POST /v1/approvals/{id}/approve|deny (operator), once.
func (s *Server) decideApproval(status string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st, ok := s.approvals(w)
		if !ok {
			return
		}
		if status == StatusApproved {
			// The operator is not the person: an approval whose site
			// requires the person's passkey is approved on the screen only.
			a, err := st.Approval(r.Context(), r.PathValue("id"))
			if err == nil && s.passkeyRequired(a) {
				s.fail(w, perr.DelegationCredentialInvalid, "This approval needs the person's passkey on the approval screen")
				return
			}
		}
		err := st.DecideApproval(r.Context(), r.PathValue("id"), status, s.nowMs())
		switch {
		case errors.Is(err, ErrConflict):
			s.fail(w, perr.DelegationExpired, "The approval is decided or expired already")
		case err != nil:
			s.internal(w, r, err)
		default:
			writeJSON(w, http.StatusOK, map[string]any{"status": status})
		}
	}
}

// collectApproval: POST /v1/approvals/{id}/token {pollSecret} → 202
// {status: pending} while no one decided; 200 {status: approved,
// approval} once, the approval signed for the binding and the audience;
// DELEGATION_REVOKED when denied, DELEGATION_EXPIRED when it lapsed. A
// collected approval's poll secret is spent.
func (s *Server) collectApproval(w http.ResponseWriter, r *http.Request) {
	var req struct {
		PollSecret string `json:"pollSecret"`
	}
	st, ok := s.approvalBody(w, r, &req)
	if !ok {
		return
	}
	a, err := st.Approval(r.Context(), r.PathValue("id"))
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.internal(w, r, err)
		return
	}
	if !s.pollSecret(w, req.PollSecret, a.PollSecretDigest, err != nil || a.Collected) {
		return
	}
	now := s.nowMs()
	if s.closed(w, a.Status == StatusDenied, now >= a.ExpiresMs, "A person denied the action", "The approval expired") {
		return
	}
	if a.Status == StatusPending {
		writeJSON(w, http.StatusAccepted, map[string]any{"status": "pending", "intervalSeconds": 1})
		return
	}
	if s.passkeyRequired(a) {
		// Verified again before signing: a row set to approved in the
		// database holds no assertion of the person's passkey over this
		// approval's challenge.
		if _, _, err := s.verifyApprovalPasskey(r.Context(), a, a.Passkey, false); err != nil {
			if !errors.Is(err, errPasskey) {
				s.internal(w, r, err)
				return
			}
			s.cfg.Logger.Warn("approved without a valid passkey assertion: not signed", "approval", a.ID)
			s.fail(w, perr.DelegationCredentialInvalid, "The approval holds no valid passkey assertion")
			return
		}
	}
	k, err := s.signingKey(r.Context(), now)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if err := st.CollectApproval(r.Context(), a.ID); s.refused(w, r, err, ErrConflict, perr.DelegationCredentialInvalid, "The poll secret is not valid") {
		return
	}
	// The binding's other fields go along in the clear, so the site's
	// server can compute the binding again from what it is about to do
	// (follow.Follower.CheckCall).
	var shown approvalShown
	if err := json.Unmarshal([]byte(a.Challenge), &shown); err != nil {
		s.internal(w, r, err)
		return
	}
	tok, err := signApproval(k, runtime.ApprovalClaims{Binding: a.Binding, Audience: a.Audience, IssuedAtMs: now,
		ExpiresAtMs: a.ExpiresMs, ID: a.ID, RequestID: shown.Request.RequestID, Session: shown.Request.Session,
		Summary: shown.Request.Summary})
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "approved", "approval": tok,
		"expiresAt": time.UnixMilli(a.ExpiresMs).UTC().Format(time.RFC3339)})
}

// signApproval makes a pa1 approval: pa1.<kid>.<payload>.<signature>,
// signed with the session keys over a text that starts "pa1.", so an
// approval is never a session token (pl1) nor one a session token.
func signApproval(k *SigningKey, c runtime.ApprovalClaims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	head := runtime.ApprovalPrefix + "." + k.Kid + "." + b64.EncodeToString(payload)
	sig := ed25519.Sign(ed25519.PrivateKey(k.PrivateKey), []byte(head))
	return head + "." + b64.EncodeToString(sig), nil
}
