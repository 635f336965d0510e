package runtime

import (
	"context"

	"github.com/pling-go/pling/schema"
)

// HandoffRequest is what the handoff UI shows a person.
type HandoffRequest struct {
	Capability string
	Record     string
	Title      string
	Prompt     string
	TimeoutMs  int64
}

// HandoffOutcome is the person's answer.
type HandoffOutcome int

// The outcomes a handoff UI reports. A timeout is the runtime's to decide:
// the UI just never answers.
const (
	HandoffDone HandoffOutcome = iota + 1
	HandoffCancel
)

// HandoffUI shows a handoff to a person (the shim's overlay, a test
// script). Show returns at once; the channel receives the person's answer
// when there is one. The context is cancelled when the runtime stops
// waiting (time out), so the UI can close itself.
type HandoffUI interface {
	Show(ctx context.Context, req HandoffRequest) <-chan HandoffOutcome
}

// Approver is the approval backend (docs/protocol.md §3.6). It shows the challenge
// to a person and answers with a decision for a binding; the runtime runs
// the action only if the decision approves the very binding it built. The
// challenge's Record and Input are what the binding holds, already
// rendered for a person (redacted, escaped, bounded): show them as text,
// all of them, and say when More is not zero.
type Approver interface {
	Approve(ctx context.Context, ch schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision
}

// wait returns the first value of ch, or false when timeoutMs passes on the
// clock or ctx ends first. A value already waiting wins over an expired
// timer, so scripted answers are deterministic on a fake clock.
func wait[T any](ctx context.Context, c Clock, ch <-chan T, timeoutMs int64) (T, bool) {
	select {
	case v, ok := <-ch:
		return v, ok
	default:
	}
	var zero T
	after, stop := afterStop(c, timeoutMs)
	defer stop()
	select {
	case v, ok := <-ch:
		return v, ok
	case <-after:
		select {
		case v, ok := <-ch:
			return v, ok
		default:
		}
		return zero, false
	case <-ctx.Done():
		return zero, false
	}
}
