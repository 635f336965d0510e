// Revocation: revoking a session and the revocation feed relying parties follow.

package authority

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"time"

	perr "github.com/pling-go/pling/errors"
)

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

// FeedPageSize is the most entries one answer of the revocation feed
// holds: a follower starting from the feed's start reads the live
// revocations in pages of this size (at most about 400 KB each, under a
// follower's 1 MiB bound on an answer).
const FeedPageSize = 4000

// revocations is the feed: the live entries after the cursor, waiting up
// to waitSeconds (capped by MaxWait) for one when there is none. A
// revocation on this instance wakes the wait at once; one on another
// instance sharing the store is seen within a second. Each answer names
// the store's epoch; a poll naming another epoch (the store was restored
// since) is answered at once, so the follower re-reads the feed.
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
	epoch, err := s.epoch(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if v := q.Get("epoch"); v != "" && v != epoch {
		d = 0
	}
	if d > 0 {
		release, ok := s.feedSlot(s.feedClient(r))
		if !ok {
			w.Header().Set("Retry-After", "1")
			s.failStatus(w, http.StatusServiceUnavailable, perr.DelegationInternal, "Too many polls are waiting here; retry")
			return
		}
		defer release()
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.revoked
		s.mu.Unlock()
		if e, err := s.epoch(r.Context()); err != nil {
			s.internal(w, r, err)
			return
		} else if e != epoch {
			epoch, d = e, 0 // restored while waiting: answer now
		}
		list, next, err := s.cfg.Store.Revocations(r.Context(), after, s.nowMs()-s.cfg.Retention.RevocationGrace.Milliseconds(), FeedPageSize)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		// Entries past their expiry are skipped, not served: the cursor
		// moves over them, so the wait goes on from there.
		after = next
		if len(list) > 0 || d == 0 {
			out := make([]map[string]any, 0, len(list))
			for _, e := range list {
				entry := map[string]any{"sessionId": e.SessionID, "at": time.UnixMilli(e.AtMs).UTC().Format(time.RFC3339Nano)}
				if e.ExpiresMs > 0 {
					entry["expiresAt"] = time.UnixMilli(e.ExpiresMs).UTC().Format(time.RFC3339Nano)
				}
				out = append(out, entry)
			}
			writeJSON(w, http.StatusOK, map[string]any{"epoch": epoch, "cursor": strconv.FormatInt(next, 10), "revoked": out})
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
