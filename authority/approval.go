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
	"github.com/pling-go/pling/runtime"
)

// Approvals given outside the page (docs/authority.md "Approvals"): a
// page sends its approval challenge — the binding's
// digest and what the person is to be shown — to its authority; a person
// approves on a screen the site's backend serves (with the operator key,
// like the consent screen); the page collects, once, an approval the
// authority signed for that exact binding and checks it with the keys it
// already follows (runtime.TokenVerifier.VerifyApproval). A page script
// or an agent in the page can forge a click, but not a signature.

// Approval is one approval challenge at the authority.
type Approval struct {
	ID               string
	PollSecretDigest []byte
	Audience         string // the page's origin
	Binding          string // the SurfaceApprovalBinding's digest
	Challenge        string // the challenge as the page sent it (JSON), for the screen
	Status           string // pending, approved, denied
	CreatedMs        int64
	ExpiresMs        int64
	Collected        bool
}

// ApprovalStore keeps approvals. The SQL store (SQLite and PostgreSQL)
// implements it; a Server whose Store does not refuses the routes.
type ApprovalStore interface {
	CreateApproval(ctx context.Context, a Approval) error
	// Approval returns one; ErrNotFound when there is none.
	Approval(ctx context.Context, id string) (Approval, error)
	// DecideApproval moves a pending, unexpired approval to status;
	// ErrConflict when it is not pending any more or has expired.
	DecideApproval(ctx context.Context, id, status string, nowMs int64) error
	// CollectApproval marks an approved approval collected, exactly once;
	// ErrConflict when it was collected already or is not approved.
	CollectApproval(ctx context.Context, id string) error
}

// Bounds of an approval challenge.
const (
	maxApprovalTTLMs     = 10 * 60 * 1000 // an approval waits at most 10 minutes
	maxApprovalChallenge = 16 << 10       // bytes of the challenge's JSON
)

var bindingDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func (s *SQLStore) CreateApproval(ctx context.Context, a Approval) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO approvals
		(id, poll_secret_digest, audience, binding, challenge, status, created_ms, expires_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.PollSecretDigest, a.Audience, a.Binding, a.Challenge, StatusPending, a.CreatedMs, a.ExpiresMs)
	return err
}

func (s *SQLStore) Approval(ctx context.Context, id string) (Approval, error) {
	var a Approval
	var collected int64
	err := s.db.QueryRowContext(ctx, `SELECT id, poll_secret_digest, audience, binding, challenge, status, created_ms, expires_ms, collected
		FROM approvals WHERE id = ?`, id).Scan(&a.ID, &a.PollSecretDigest, &a.Audience, &a.Binding, &a.Challenge, &a.Status,
		&a.CreatedMs, &a.ExpiresMs, &collected)
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, ErrNotFound
	}
	a.Collected = collected != 0
	return a, err
}

func (s *SQLStore) DecideApproval(ctx context.Context, id, status string, nowMs int64) error {
	r, err := s.db.ExecContext(ctx, `UPDATE approvals SET status = ?
		WHERE id = ? AND status = 'pending' AND expires_ms > ?`, status, id, nowMs)
	return oneRow(r, err)
}

func (s *SQLStore) CollectApproval(ctx context.Context, id string) error {
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

// createApproval: POST /v1/approvals {audience, binding, challenge,
// expiresAtMs} → 201 {id, pollSecret, expiresAtMs}. The audience must be
// one the authority issues for; the challenge is kept as the page sent it
// (the screen escapes it) and bounded.
func (s *Server) createApproval(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Audience    string          `json:"audience"`
		Binding     string          `json:"binding"`
		Challenge   json.RawMessage `json:"challenge"`
		ExpiresAtMs int64           `json:"expiresAtMs"`
	}
	st, ok := s.approvalBody(w, r, &req)
	if !ok {
		return
	}
	now := s.nowMs()
	var ch map[string]any
	switch {
	case !isOrigin(req.Audience):
		s.fail(w, perr.DelegationRequestInvalid, "audience must be an origin")
		return
	case !bindingDigest.MatchString(req.Binding):
		s.fail(w, perr.DelegationRequestInvalid, "binding must be sha256: and 64 lowercase hex digits")
		return
	case len(req.Challenge) > maxApprovalChallenge || !utf8.Valid(req.Challenge) || json.Unmarshal(req.Challenge, &ch) != nil || ch == nil:
		s.fail(w, perr.DelegationRequestInvalid, "challenge must be a JSON object of at most 16 KiB")
		return
	case ch["binding"] != req.Binding:
		s.fail(w, perr.DelegationBindingMismatch, "The challenge is for another binding")
		return
	case req.ExpiresAtMs <= now || req.ExpiresAtMs > now+maxApprovalTTLMs:
		s.fail(w, perr.DelegationRequestInvalid, "expiresAtMs must be in the next 10 minutes")
		return
	}
	if _, ok := s.cfg.Audiences[req.Audience]; !ok {
		s.fail(w, perr.DelegationAudienceMismatch, "The authority does not issue for this origin")
		return
	}
	secret := randomID(32)
	sd := sha256.Sum256([]byte(secret))
	a := Approval{ID: randomID(16), PollSecretDigest: sd[:], Audience: req.Audience, Binding: req.Binding,
		Challenge: string(req.Challenge), CreatedMs: now, ExpiresMs: req.ExpiresAtMs}
	if err := st.CreateApproval(r.Context(), a); err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": a.ID, "pollSecret": secret, "expiresAtMs": a.ExpiresMs})
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
	status := a.Status
	if status == StatusPending && s.nowMs() >= a.ExpiresMs {
		status = StatusExpired
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": a.ID, "audience": a.Audience, "binding": a.Binding,
		"challenge": json.RawMessage(a.Challenge), "status": status, "expiresAtMs": a.ExpiresMs})
}

// decideApproval: POST /v1/approvals/{id}/approve|deny (operator), once.
func (s *Server) decideApproval(status string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st, ok := s.approvals(w)
		if !ok {
			return
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
	k, err := s.signingKey(r.Context(), now)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if err := st.CollectApproval(r.Context(), a.ID); s.refused(w, r, err, ErrConflict, perr.DelegationCredentialInvalid, "The poll secret is not valid") {
		return
	}
	tok, err := signApproval(k, runtime.ApprovalClaims{Binding: a.Binding, Audience: a.Audience, IssuedAtMs: now,
		ExpiresAtMs: a.ExpiresMs, ID: a.ID})
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
