package authority

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/pling-go/pling/authority/internal/urlsafe"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/idchars"
	"github.com/pling-go/pling/internal/wire"
)

// The shared replay guard (docs/authority.md "Shared replay guard"): a
// page that follows the authority consumes the id of each write or
// destructive invoke of a delegated session here, so that one request id
// executes at most once across reloads, tabs and hosts.
//
//	POST /v1/sessions/{sessionId}/requests/{requestId}          → 201 | 409 {previous}
//	PUT  /v1/sessions/{sessionId}/requests/{requestId}/complete  {ok, code} → 200
//
// Both are authenticated by the session's own pl1 token as bearer.

// validCode is a code: up to 64 chars of [A-Za-z0-9_.:-] (the protocol's
// codes and a page's business codes), or empty.
func validCode(s string) bool {
	return idchars.Of(s, 0, 64, "_.:-")
}

// sessionBearer authenticates a request by the session's own token: the
// path's session exists, the bearer's digest is its token's, and it is
// neither expired nor revoked. An unknown session and a wrong token get
// the same answer, so the route tells nobody which session ids exist.
func (s *Server) sessionBearer(w http.ResponseWriter, r *http.Request) (Session, bool) {
	id, rid := r.PathValue("id"), r.PathValue("rid")
	if !urlsafe.ID(id) || !wire.ValidID(rid) {
		s.fail(w, perr.DelegationRequestInvalid, "The session id or request id is malformed")
		return Session{}, false
	}
	return s.sessionByBearer(w, r, id)
}

// sessionByBearer is sessionBearer for the session id, from wherever the
// route names it.
func (s *Server) sessionByBearer(w http.ResponseWriter, r *http.Request, id string) (Session, bool) {
	if !urlsafe.ID(id) {
		s.fail(w, perr.DelegationCredentialInvalid, "The session's token is required")
		return Session{}, false
	}
	b := bearer(r)
	if b == "" {
		s.fail(w, perr.DelegationCredentialInvalid, "The session's token is required")
		return Session{}, false
	}
	se, err := s.cfg.Store.Session(r.Context(), id)
	if s.refused(w, r, err, ErrNotFound, perr.DelegationCredentialInvalid, "The session's token is required") {
		return se, false
	}
	td := sha256.Sum256([]byte(b))
	if subtle.ConstantTimeCompare(td[:], se.TokenDigest) != 1 {
		s.fail(w, perr.DelegationCredentialInvalid, "The session's token is required")
		return se, false
	}
	switch {
	case se.RevokedMs != 0:
		s.fail(w, perr.DelegationRevoked, "The session was revoked")
		return se, false
	case s.nowMs() >= se.ExpiresMs:
		s.fail(w, perr.DelegationExpired, "The session expired")
		return se, false
	}
	return se, true
}

func previousJSON(p RequestRecord) map[string]any {
	prev := map[string]any{"completed": p.Completed}
	if p.Completed {
		prev["ok"] = p.OK
		if p.Code != "" {
			prev["code"] = p.Code
		}
	}
	return prev
}

func (s *Server) consumeRequest(w http.ResponseWriter, r *http.Request) {
	var empty struct{}
	if !s.readBody(w, r, &empty, true) {
		return
	}
	se, ok := s.sessionBearer(w, r)
	if !ok {
		return
	}
	now := s.nowMs() // expired records are the sweeper's (sweeper.go), not a client's
	created, prev, err := s.cfg.Store.ConsumeRequest(r.Context(), RequestRecord{SessionID: se.ID,
		RequestID: r.PathValue("rid"), CreatedMs: now, ExpiresMs: se.ExpiresMs}, s.cfg.MaxRequestsPerSession)
	switch {
	case errors.Is(err, ErrFull):
		s.failStatus(w, http.StatusTooManyRequests, perr.DelegationRequestInvalid, "The session holds its bound of request records")
	case err != nil:
		s.internal(w, r, err)
	case created:
		writeJSON(w, http.StatusCreated, map[string]any{"status": "consumed"})
	default:
		writeJSON(w, http.StatusConflict, map[string]any{"previous": previousJSON(prev)})
	}
}

type completeReq struct {
	OK   *bool  `json:"ok"`
	Code string `json:"code"`
}

func (s *Server) completeRequest(w http.ResponseWriter, r *http.Request) {
	var req completeReq
	if !s.readBody(w, r, &req, false) {
		return
	}
	if req.OK == nil || !validCode(req.Code) {
		s.fail(w, perr.DelegationRequestInvalid, "ok is required; code must be a protocol code")
		return
	}
	se, ok := s.sessionBearer(w, r)
	if !ok {
		return
	}
	err := s.cfg.Store.CompleteRequest(r.Context(), se.ID, r.PathValue("rid"), *req.OK, req.Code)
	switch {
	case errors.Is(err, ErrNotFound):
		s.fail(w, perr.DelegationNotFound, "The request id was not consumed")
	case errors.Is(err, ErrConflict):
		s.failStatus(w, http.StatusConflict, perr.DelegationRequestInvalid, "The request was completed already")
	case err != nil:
		s.internal(w, r, err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"status": "completed"})
	}
}
