package authority

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
)

// Task is a continuity task (docs/authority.md "Continuity"): a JSON state
// object with a revision, owned by one subject, with at most one lease.
type Task struct {
	ID        string
	Owner     string
	Revision  int64
	State     []byte // a compact JSON object
	CreatedMs int64
	UpdatedMs int64
	// IdleMs is how long the task is kept when nobody writes it (0: the
	// server's Retention.TaskIdle); set at creation.
	IdleMs int64
	// The current lease; LeaseID is empty when there is none. A lease whose
	// LeaseExpiresMs has passed is not live, though it may still be named
	// here until someone else acquires.
	LeaseID        string
	LeaseHolder    string
	LeaseExpiresMs int64
}

// Lease is one lease of a task.
type Lease struct {
	ID        string
	Holder    string
	ExpiresMs int64
}

// LeaseRequest asks for the lease of a task. NowMs is the server's clock;
// SkewMs is the most two instances' clocks may disagree: a lapsed lease is
// handed to someone else only SkewMs after it lapsed, so that no instance
// can still take it for live (RATIONALE.md "Why server time with a skew
// margin for leases?").
type LeaseRequest struct {
	TaskID, Owner   string
	LeaseID, Holder string
	TTLMs           int64
	NowMs, SkewMs   int64
}

// UpdateRequest is a conditional write of a task's state.
type UpdateRequest struct {
	TaskID, Owner string
	LeaseID       string
	IfRevision    int64
	State         []byte
	NowMs         int64
}

// Idempotency is the record of a write made with an Idempotency-Key. The
// store claims (Owner, Key) and stores the answer in the write's own
// transaction: the write and its remembered answer commit together or not
// at all.
type Idempotency struct {
	Owner, Key string
	// Digest identifies the request (method, path, If-Match, body).
	Digest    []byte
	CreatedMs int64
	ExpiresMs int64
	// Answer renders the HTTP answer from the write's result (a Task, a
	// Lease, a revision); it is called inside the transaction.
	Answer func(result any) (status int, body []byte)
}

// Replayed is the error of a write whose (Owner, Key) was claimed already:
// nothing was written; the first request's digest and answer are returned.
type Replayed struct {
	Digest []byte
	Status int
	Body   []byte
}

func (r *Replayed) Error() string { return "authority: idempotency key used already" }

// LeaseHeldError is a lease acquire that lost: the task has a live lease.
type LeaseHeldError struct{ RetryAfterMs int64 }

func (e *LeaseHeldError) Error() string {
	return "authority: lease held (retry after " + strconv.FormatInt(e.RetryAfterMs, 10) + " ms)"
}

// Continuity errors of a Store.
var (
	ErrTaskExists       = errors.New("authority: task exists")
	ErrOwnerMismatch    = errors.New("authority: task of another owner")
	ErrRevisionConflict = errors.New("authority: revision conflict")
	ErrLeaseExpired     = errors.New("authority: lease expired")
	ErrLeaseRevoked     = errors.New("authority: lease revoked")
	// ErrInvalidState is a write the task does not allow: its state has a
	// terminal status.
	ErrInvalidState = errors.New("authority: task is in a terminal state")
)

// ContinuityStore is the task part of a Store. Every write is one
// transaction with its Idempotency record (nil when the request had no
// key); a claimed key returns *Replayed and writes nothing.
type ContinuityStore interface {
	// CreateTask inserts t; ErrTaskExists when its id is taken.
	CreateTask(ctx context.Context, t Task, idem *Idempotency) (Task, error)
	// Task returns a task by id (ErrNotFound).
	Task(ctx context.Context, id string) (Task, error)
	// AcquireLease gives the caller the lease when the task has none live
	// (one conditional statement); the current lease when Holder already
	// holds it; else *LeaseHeldError.
	AcquireLease(ctx context.Context, l LeaseRequest, idem *Idempotency) (Lease, error)
	// RenewLease extends a live lease by ttlMs (0: its own TTL).
	RenewLease(ctx context.Context, taskID, owner, leaseID string, ttlMs, nowMs int64, idem *Idempotency) (Lease, error)
	// ReleaseLease ends a live lease.
	ReleaseLease(ctx context.Context, taskID, owner, leaseID string, nowMs int64, idem *Idempotency) (Lease, error)
	// RevokeLease ends the task's live lease, whoever holds it
	// (ErrLeaseExpired when there is none).
	RevokeLease(ctx context.Context, taskID, owner string, nowMs int64, idem *Idempotency) (Lease, error)
	// UpdateTask writes the state when the task allows it, the lease is
	// live and the revision matches; it returns the new revision.
	UpdateTask(ctx context.Context, u UpdateRequest, idem *Idempotency) (int64, error)
	// SweepContinuity deletes idempotency records expired at nowMs and the
	// history of leases acquired before leasesBeforeMs that are not current.
	SweepContinuity(ctx context.Context, nowMs, leasesBeforeMs int64) error
}

// Terminal statuses: a task whose state says {"status":"done"} or
// {"status":"cancelled"} accepts no more writes or leases.
var terminalStatuses = map[string]bool{"done": true, "cancelled": true}

// isTerminal reports whether a task's state has a terminal status.
func isTerminal(state []byte) bool {
	// A map, not a struct: the key is matched exactly, as a page's
	// JSON.parse(state).status reads it (a struct field would also take
	// "Status").
	var v map[string]json.RawMessage
	var s string
	if json.Unmarshal(state, &v) != nil || json.Unmarshal(v["status"], &s) != nil {
		return false
	}
	return terminalStatuses[s]
}
