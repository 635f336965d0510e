package runtime

import (
	"context"
	"strings"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/runtime/internal/canon"
	"github.com/pling-go/pling/schema"
)

// authorize runs the policy, then the approval flow of docs/protocol.md §3.6: the
// runtime builds an immutable binding (capability, input digest, session
// digest, request id, expiry), shows a challenge that carries no token, and
// goes on only when the decision approves that very binding before it
// expires. Anything else is PERMISSION_DENIED, and nothing runs.
func (in *invocation) authorize(ctx context.Context, ev *schema.Evidence) *failure {
	rt := in.rt
	if rt.cfg.policy != nil {
		if deny := rt.cfg.policy(ctx, in.call); deny != "" {
			return fail(perr.PermissionDenied, cut(perr.RedactString(deny), rt.cfg.limits.MaxTextLen), nil)
		}
	}
	if !in.act.Approval {
		return nil
	}
	reason := ""
	if in.act.ApprovalFor != nil {
		need, why, err := in.act.ApprovalFor(ctx, in.input, in.call.Record)
		if err == nil && !need {
			return nil
		}
		if err == nil {
			reason = why
		}
	}
	if rt.cfg.approver == nil {
		return fail(perr.PermissionDenied, "This action needs approval and the page has no approval backend", nil)
	}
	summary, bound := in.cap.id+recordSuffix(in.call.Record), ""
	if in.act.ApprovalSummary != nil {
		s, err := in.act.ApprovalSummary(ctx, in.input, in.call.Record)
		if err != nil || strings.TrimSpace(s) == "" {
			return fail(perr.PermissionDenied, "The page could not say what the person would approve (its approval summary failed)", nil)
		}
		bound = displayText(perr.RedactString(s), maxApprovalSummary).text
		summary = bound
	}
	now := rt.cfg.clock.NowMs()
	req, digest, err := in.binding(approvalExpiry(ctx, now, rt.cfg.approvalTTLMs), bound)
	if err != nil {
		return fail(perr.PermissionDenied, "The approval binding could not be built", nil)
	}
	ch := schema.SurfaceApprovalChallenge{
		Binding: digest, Capability: in.cap.id, Title: in.act.Title, Risk: riskOf(&in.act),
		Summary: summary, ExpiresAtMs: req.ExpiresAtMs,
	}
	if reason != "" {
		ch.Reason = displayText(perr.RedactString(reason), maxApprovalValue).text
	}
	if in.sess != nil && in.sess.Agent != "" {
		ch.Agent = displayText(in.sess.Agent, maxApprovalName).text
	}
	in.approvalDisplay(&ch)
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	ra, outside := rt.cfg.approver.(RequestApprover)
	rt.notifyWaiting(ctx, Waiting{RequestID: in.req.ID, Capability: in.cap.id, Kind: WaitingApproval, TimeoutMs: req.ExpiresAtMs - now, Outside: outside})
	var decided <-chan schema.SurfaceApprovalDecision
	if outside {
		decided = ra.ApproveRequest(actx, ch, req)
	} else {
		decided = rt.cfg.approver.Approve(actx, ch)
	}
	dec, ok := wait(actx, rt.cfg.clock, decided, req.ExpiresAtMs-now)
	switch {
	case !ok && ctx.Err() != nil:
		// The caller gave up (Runtime.Cancel, or its context ended): the
		// dialog closes with actx, and nothing runs.
		return fail(perr.PermissionDenied, "The request was cancelled before a decision", cancelledDetails())
	case !ok || rt.cfg.clock.NowMs() > req.ExpiresAtMs:
		return fail(perr.PermissionDenied, "The approval expired before a decision", nil)
	case dec.Binding != digest:
		return fail(perr.PermissionDenied, "The decision is for a different request", nil)
	case !dec.Approved:
		return fail(perr.PermissionDenied, "A person denied the action", nil)
	}
	ev.Approval = "approved"
	in.call.Approval = dec.Approval
	return nil
}

// binding builds the approval request and its binding's digest. The
// session is bound by a digest of its key, never by the token.
func (in *invocation) binding(expiresAtMs int64, summary string) (ApprovalRequest, string, error) {
	input := map[string]any{}
	for k, v := range in.input {
		input[k] = v
	}
	if in.call.Record != "" {
		input["record"] = in.call.Record
	}
	sessDigest, _ := canon.Digest(in.sess.key)
	req := ApprovalRequest{Capability: in.cap.id, Input: input, Session: sessDigest, RequestID: in.req.ID,
		ExpiresAtMs: expiresAtMs, Summary: summary, SessionKey: in.sess.key}
	d, err := req.Binding()
	return req, d, err
}

// ApprovalRequest is what a person is asked to approve, in the clear: the
// fields of the SurfaceApprovalBinding before they are digested. An
// approval backend outside the page (an authority) is sent these, not a
// digest and a text to show, so that it computes the binding itself and
// shows the person exactly what the binding covers: a page script that
// rewrites what is sent changes the binding with the words, and the
// approval a person then gives is for a request the page never runs.
type ApprovalRequest struct {
	Capability string `json:"capability"`
	// Input is the validated input (defaults applied), with "record"
	// added for a folded invoke.
	Input map[string]any `json:"input"`
	// Session is a digest of the session's key, never the token.
	Session     string `json:"session"`
	RequestID   string `json:"requestId"`
	ExpiresAtMs int64  `json:"expiresAtMs"`
	// Summary is the page's summary, bound: an approval of one text
	// approves no other.
	Summary string `json:"summary,omitempty"`
	// SessionKey is the runtime's key of the asking session (what a
	// ReplayGuard is given): how a follower finds the session's token to
	// authenticate the request with. It is never sent.
	SessionKey string `json:"-"`
}

// Binding is the digest of the request's SurfaceApprovalBinding, the one
// an approval is signed for and the runtime accepts.
func (r ApprovalRequest) Binding() (string, error) {
	input := r.Input
	if input == nil {
		input = map[string]any{}
	}
	inputDigest, err := canon.Digest(input)
	if err != nil {
		return "", err
	}
	return canon.Digest(schema.SurfaceApprovalBinding{Capability: r.Capability, InputDigest: inputDigest, Session: r.Session,
		RequestID: r.RequestID, ExpiresAtMs: r.ExpiresAtMs, Summary: r.Summary})
}

// Record is the row the request acts on ("" for none).
func (r ApprovalRequest) Record() string {
	s, _ := r.Input["record"].(string)
	return s
}

// Fields renders the input for a person as the runtime's own dialog does
// (redacted, escaped, bounded; the record aside), in order (those names
// first, then the rest sorted), each titled by titles[name] when given,
// else by its name; more counts those left out by the bound.
func (r ApprovalRequest) Fields(order []string, titles map[string]string) (fields []schema.ApprovalField, more int) {
	input := make(map[string]any, len(r.Input))
	for k, v := range r.Input {
		if k != "record" {
			input[k] = v
		}
	}
	return displayFields(input, order, func(name string) string {
		if t := strings.TrimSpace(titles[name]); t != "" {
			return t
		}
		return name
	})
}

// RequestApprover is an Approver that is given the request in the clear
// as well as the challenge (an authority computes the binding from it);
// the runtime calls ApproveRequest instead of Approve when the approver
// has it.
type RequestApprover interface {
	Approver
	ApproveRequest(ctx context.Context, ch schema.SurfaceApprovalChallenge, req ApprovalRequest) <-chan schema.SurfaceApprovalDecision
}

// approvalWindowKey carries the time (ms on the runtime's clock) by which
// the caller of an invoke stops waiting for its answer.
type approvalWindowKey struct{}

// WithCallWindow says that the caller of the invoke handled under ctx
// stops waiting for its answer at deadlineMs (on the runtime's clock): an
// approval the invoke asks for lapses then, so that a person who
// approves after the caller gave up runs nothing. Only the approval is
// bounded; a handler that runs is not cut short. (A deadline of ctx
// bounds the approval too.)
func WithCallWindow(ctx context.Context, deadlineMs int64) context.Context {
	return context.WithValue(ctx, approvalWindowKey{}, deadlineMs)
}

// approvalExpiry is when an approval asked at nowMs lapses: after ttlMs,
// or sooner when the call's window (WithCallWindow) or ctx's deadline
// ends first. An approval ends with its call.
func approvalExpiry(ctx context.Context, nowMs, ttlMs int64) int64 {
	exp := nowMs + ttlMs
	if w, ok := ctx.Value(approvalWindowKey{}).(int64); ok && w < exp {
		exp = w
	}
	if d, ok := ctx.Deadline(); ok {
		if dl := nowMs + time.Until(d).Milliseconds(); dl < exp {
			exp = dl
		}
	}
	return max(exp, nowMs)
}

func recordSuffix(rec string) string {
	if rec == "" {
		return ""
	}
	return " on " + rec
}
