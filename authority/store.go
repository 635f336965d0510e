// Package authority is the authority of docs/authority.md: the
// device-grant flow by which an agent gets a pl1 session token for a page
// origin (delegation), session revocation with a monotonic feed, the
// published signing keys, the shared replay guard (each request id of a
// session consumed once across every instance, requests.go), and the
// continuity service (tasks an agent carries across pages, with
// revisions, leases and idempotency keys; continuity.go).
//
// The shared state lives in a Store (SQLite for one machine, PostgreSQL
// for many), so instances behind a load balancer agree on delegations,
// sessions, revocations, keys, consumed requests and tasks. What an
// instance keeps for itself is only protective: its rate limiters
// (ratelimit.go) count in that instance's memory, so N instances allow up
// to N times the configured rate, and they start empty after a restart.
package authority

import (
	"context"
	"errors"
)

// Delegation statuses.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusDenied   = "denied"
	StatusExpired  = "expired"
)

// Delegation is one device-grant request. Only the digest of its poll
// secret is kept.
type Delegation struct {
	ID               string
	UserCode         string
	PollSecretDigest []byte
	Audience         string
	Scope            []string
	Agent            string
	TTLMs            int64
	Status           string
	ApprovedScope    []string
	// Subject is the person who consented, named by the operator's
	// approve; the token's subject ("" until approved).
	Subject    string
	CreatedMs  int64
	ExpiresMs  int64
	LastPollMs int64
	SessionID  string // set once the token was collected
	// Client is the address that asked (clientIP), for the per-address
	// bound of pending delegations.
	Client string
}

// Session is an issued token, by the digest of the token.
type Session struct {
	ID           string
	DelegationID string
	TokenDigest  []byte
	Audience     string
	ExpiresMs    int64
	RevokedMs    int64
}

// Revocation is one entry of the revocation feed.
type Revocation struct {
	Cursor    int64
	SessionID string
	AtMs      int64
	ExpiresMs int64 // the session's expiry (0: not known)
}

// SigningKey is an Ed25519 key of the authority. A retired key signs no
// more tokens and stays published until NotAfterMs (its last token's
// expiry).
type SigningKey struct {
	Kid        string
	PrivateKey []byte // ed25519 private key (64 bytes)
	CreatedMs  int64
	RetiredMs  int64
	NotAfterMs int64
}

// RequestRecord is one request id consumed through the shared replay
// guard: whether the request completed, and how (its code only).
type RequestRecord struct {
	SessionID string
	RequestID string
	Completed bool
	OK        bool
	Code      string
	CreatedMs int64
	ExpiresMs int64
}

// Errors of a Store.
var (
	ErrNotFound = errors.New("authority: not found")
	// ErrConflict is a conditional write that lost (state changed).
	ErrConflict = errors.New("authority: conflict")
	// ErrFull is a session that holds its bound of request records.
	ErrFull = errors.New("authority: the session holds its bound of request records")
)

// Store is where the authority keeps its state. Every method is one
// atomic step, so that any number of instances may share a store
// (SQLite for one machine; PostgreSQL across many — the SQL is portable).
type Store interface {
	Ping(ctx context.Context) error
	Close() error

	CreateDelegation(ctx context.Context, d Delegation) error
	Delegation(ctx context.Context, id string) (Delegation, error)
	// DelegationByUserCode finds a delegation by its user code (what a
	// consent screen is given).
	DelegationByUserCode(ctx context.Context, code string) (Delegation, error)
	// Decide moves a pending, unexpired delegation to status (approved or
	// denied) with scope and the consenting person's subject; ErrConflict
	// when it is not pending any more.
	Decide(ctx context.Context, id, status string, scope []string, subject string, nowMs int64) error
	// Poll records a poll at nowMs and returns the previous poll time.
	Poll(ctx context.Context, id string, nowMs int64) (prevMs int64, err error)
	// Collect atomically marks an approved delegation collected with
	// session s; ErrConflict when it was collected already (exactly once).
	Collect(ctx context.Context, id string, s Session) error

	Session(ctx context.Context, id string) (Session, error)
	// Revoke revokes a session once and appends it to the feed; revoking
	// again is a no-op.
	Revoke(ctx context.Context, sessionID string, nowMs int64) error
	// Revocations returns up to limit entries with cursor > after whose
	// session expired after liveFromMs (or whose expiry is not known):
	// the feed never serves an entry no token can need. next is where a
	// reader continues: the last entry's cursor when the page is full,
	// else the highest cursor the store held at the read (the entries
	// skipped up to it are past their expiry), never less than after.
	Revocations(ctx context.Context, after, liveFromMs int64, limit int) (list []Revocation, next int64, err error)
	// Epoch names this store's history; a restore (Restored) changes it
	// (restore.go). The first call on a store makes it.
	Epoch(ctx context.Context) (string, error)
	// Restored ends the past of a store that was restored from a backup,
	// in one transaction: every signing key stops being published at
	// nowMs and k signs from now on, the epoch becomes epoch, every
	// session not expired is marked revoked and every delegation not
	// collected ends (restore.go).
	Restored(ctx context.Context, nowMs int64, epoch string, k SigningKey) (RestoreResult, error)

	// ConsumeRequest records (r.SessionID, r.RequestID) once, atomically:
	// of concurrent calls exactly one gets created true; the others get
	// the record as it stands. A new record counts against the session's
	// bound of maxPerSession (ErrFull when it holds that many).
	ConsumeRequest(ctx context.Context, r RequestRecord, maxPerSession int64) (created bool, prev RequestRecord, err error)
	// CompleteRequest records how a consumed request ended, once:
	// ErrNotFound when it was never consumed, ErrConflict when it was
	// completed already.
	CompleteRequest(ctx context.Context, sessionID, requestID string, ok bool, code string) error
	// DeleteExpiredRequests drops the records of sessions expired at
	// nowMs.
	DeleteExpiredRequests(ctx context.Context, nowMs int64) error

	AddKey(ctx context.Context, k SigningKey) error
	// RetireKeys retires every active key at nowMs, publishing each until
	// notAfterMs.
	RetireKeys(ctx context.Context, nowMs, notAfterMs int64) error
	// RotateKey retires every active key (as RetireKeys) and adds k, in
	// one transaction: when it fails, the keys are as they were, so the
	// store never holds no active key.
	RotateKey(ctx context.Context, nowMs, notAfterMs int64, k SigningKey) error
	// SetKeyMaterial replaces the stored private key material of kid (a
	// key sealed again under a new KEK).
	SetKeyMaterial(ctx context.Context, kid string, material []byte) error
	// Keys returns the keys not past NotAfterMs at nowMs, newest first.
	Keys(ctx context.Context, nowMs int64) ([]SigningKey, error)

	// ContinuityStore: tasks and leases (continuity_store.go).
	ContinuityStore
}
