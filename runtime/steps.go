package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
)

// resumeStore keeps the single-use resume tokens of failed composite steps
// (docs/protocol.md §4.2): a token continues from its step once, for the same
// session and capability, until it expires.
type resumeStore struct {
	mu sync.Mutex
	m  map[string]resumeEntry
}

type resumeEntry struct {
	session    string
	capability string
	record     string
	step       int
	expiresMs  int64
}

// maxResumeTokens bounds the store; expired tokens are dropped first, then
// the one closest to expiry.
const maxResumeTokens = 1024

func newResumeStore() *resumeStore { return &resumeStore{m: map[string]resumeEntry{}} }

func (s *resumeStore) issue(random io.Reader, e resumeEntry, nowMs int64) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", err
	}
	tok := "rs_" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= maxResumeTokens {
		s.prune(nowMs)
	}
	s.m[tok] = e
	return tok, nil
}

// take consumes a token. It succeeds only for the session and capability
// (and record) it was issued for, before it expires.
func (s *resumeStore) take(tok, session, capability, record string, nowMs int64) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[tok]
	if !ok || e.session != session || e.capability != capability || e.record != record {
		return 0, false
	}
	delete(s.m, tok)
	if nowMs > e.expiresMs {
		return 0, false
	}
	return e.step, true
}

func (s *resumeStore) prune(nowMs int64) {
	var soonest string
	var at int64
	for k, e := range s.m {
		if nowMs > e.expiresMs {
			delete(s.m, k)
			continue
		}
		if soonest == "" || e.expiresMs < at || (e.expiresMs == at && k < soonest) {
			soonest, at = k, e.expiresMs
		}
	}
	if len(s.m) >= maxResumeTokens && soonest != "" {
		delete(s.m, soonest)
	}
}

// WithRandom sets the source of resume tokens and approval nonces; the
// default is crypto/rand. Tests and the conformance suite use a seeded
// source so that every host gives the same bytes.
func WithRandom(r io.Reader) Option { return func(cfg *config) { cfg.random = r } }

var cryptoRandom io.Reader = rand.Reader
