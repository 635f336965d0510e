package runtime

import (
	"context"
	"sync"

	"github.com/pling-go/pling/internal/waitnotice"
)

// The invokes in flight: a caller that gave up on one (its own deadline,
// its client gone) cancels it with Runtime.Cancel, so that nothing runs
// after the caller was told the call failed; and the notice that an
// invoke waits for a person, so that a caller knows not to give up early.

// Waiting is the notice that an invoke waits for a person before it
// answers: an approval (docs/protocol.md §3.6) or a handoff (§4.2). TimeoutMs is
// the longest the page waits for the person; the answer comes after it at
// the latest (plus the action's own run and expectation).
type Waiting struct {
	RequestID  string `json:"id"`
	Capability string `json:"capability"`
	// Kind is WaitingApproval or WaitingHandoff.
	Kind      string `json:"kind"`
	TimeoutMs int64  `json:"timeoutMs"`
	// Outside says the person approves outside this page, on an approval
	// backend's own screen (the authority's: a RequestApprover), so
	// whether anyone can see the page does not matter.
	Outside bool `json:"outside,omitempty"`
	// Approval is the id an authority gave the approval once it holds the
	// request (approvals "authority"): its approval screen shows it at
	// ApprovalPath?id=…. Empty for an approval asked in the page.
	Approval string `json:"approval,omitempty"`
}

// The kinds of Waiting.
const (
	WaitingApproval = "approval"
	WaitingHandoff  = "handoff"
)

// WithWaiting sets the page's hook for Waiting notices (the shim tells the
// page and the agent's transport with it). It is called on the invoke's
// goroutine and must return at once.
func WithWaiting(f func(Waiting)) Option { return func(cfg *config) { cfg.waiting = f } }

func (rt *Runtime) notifyWaiting(ctx context.Context, w Waiting) {
	defer func() { _ = recover() }() // a notice never breaks the invoke
	if rt.cfg.waiting != nil {
		rt.cfg.waiting(w)
	}
	if f, _ := waitnotice.Hook(ctx).(func(Waiting)); f != nil {
		f(w) // the in-process caller's own hook (agent)
	}
}

type flightKey struct{ session, id string }

// flight is one invoke in flight. Its state moves once: from open to
// committed (the run stage began: a cancel comes too late) or to
// cancelled (the invoke stops and answers a failure). The lock makes the
// two exclusive, so a person's Approve and an agent's cancel at the same
// instant have one outcome, which the cancel's answer reports.
type flight struct {
	mu     sync.Mutex
	state  int
	cancel context.CancelFunc
}

const (
	flightOpen = iota
	flightCommitted
	flightCancelled
)

type flightCtxKey struct{}

// track registers an invoke that the replay guard admitted, under its
// session's key (a digest, never the token) and request id. The returned
// func removes it; call it when the invoke answered.
func (rt *Runtime) track(ctx context.Context, sessionKey, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	f := &flight{cancel: cancel}
	k := flightKey{sessionKey, id}
	rt.flightsMu.Lock()
	if rt.flights == nil {
		rt.flights = map[flightKey]*flight{}
	}
	if _, taken := rt.flights[k]; taken {
		// A custom replay guard let a duplicate through: Cancel keeps
		// reaching the first one, and this one is not cancellable.
		rt.flightsMu.Unlock()
		return ctx, cancel
	}
	rt.flights[k] = f
	rt.flightsMu.Unlock()
	return context.WithValue(ctx, flightCtxKey{}, f), func() {
		rt.flightsMu.Lock()
		delete(rt.flights, k)
		rt.flightsMu.Unlock()
		cancel()
	}
}

// Cancel stops the invoke in flight under the session token and request id
// (as the request carried them) and reports whether it stopped it. True:
// the invoke had not reached its run stage — or, for a handoff, the person
// had not finished — and it never will; it answers PERMISSION_DENIED (or
// HANDOFF_CANCELLED) with details {"cancelled": true}, and an approval or
// handoff dialog closes. False: no such invoke in flight, or it was
// already past that point, and its answer tells the outcome.
func (rt *Runtime) Cancel(session, id string) bool {
	key := anonymousKey
	if session != "" {
		sum := tokenDigest(session)
		key = sessionKey(&sum)
	}
	rt.flightsMu.Lock()
	f := rt.flights[flightKey{key, id}]
	rt.flightsMu.Unlock()
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state != flightOpen {
		return false
	}
	f.state = flightCancelled
	f.cancel()
	return true
}

// proceed reports whether the invoke may go on, and with final it commits
// it: a later Cancel is then too late. A cancelled invoke, or one whose
// caller's context ended, does not go on.
func proceed(ctx context.Context, final bool) bool {
	f, _ := ctx.Value(flightCtxKey{}).(*flight)
	if f == nil {
		return ctx.Err() == nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state == flightCommitted {
		return true
	}
	if f.state == flightCancelled || ctx.Err() != nil {
		f.state = flightCancelled
		return false
	}
	if final {
		f.state = flightCommitted
	}
	return true
}

// cancelledDetails mark a failure that a cancel caused.
func cancelledDetails() map[string]any { return map[string]any{"cancelled": true} }
