package runtime

import (
	"context"
	"strings"

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
	binding, digest, err := in.binding(now+rt.cfg.approvalTTLMs, bound)
	if err != nil {
		return fail(perr.PermissionDenied, "The approval binding could not be built", nil)
	}
	ch := schema.SurfaceApprovalChallenge{
		Binding: digest, Capability: in.cap.id, Title: in.act.Title, Risk: riskOf(&in.act),
		Summary: summary, ExpiresAtMs: binding.ExpiresAtMs,
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
	rt.notifyWaiting(ctx, Waiting{RequestID: in.req.ID, Capability: in.cap.id, Kind: WaitingApproval, TimeoutMs: binding.ExpiresAtMs - now})
	dec, ok := wait(actx, rt.cfg.clock, rt.cfg.approver.Approve(actx, ch), binding.ExpiresAtMs-now)
	switch {
	case !ok && ctx.Err() != nil:
		// The caller gave up (Runtime.Cancel, or its context ended): the
		// dialog closes with actx, and nothing runs.
		return fail(perr.PermissionDenied, "The request was cancelled before a decision", cancelledDetails())
	case !ok || rt.cfg.clock.NowMs() > binding.ExpiresAtMs:
		return fail(perr.PermissionDenied, "The approval expired before a decision", nil)
	case dec.Binding != digest:
		return fail(perr.PermissionDenied, "The decision is for a different request", nil)
	case !dec.Approved:
		return fail(perr.PermissionDenied, "A person denied the action", nil)
	}
	ev.Approval = "approved"
	return nil
}

// binding builds the approval binding and its digest. The session is bound
// by a digest of its key, never by the token.
func (in *invocation) binding(expiresAtMs int64, summary string) (schema.SurfaceApprovalBinding, string, error) {
	input := map[string]any{}
	for k, v := range in.input {
		input[k] = v
	}
	if in.call.Record != "" {
		input["record"] = in.call.Record
	}
	inputDigest, err := canon.Digest(input)
	if err != nil {
		return schema.SurfaceApprovalBinding{}, "", err
	}
	sessDigest, _ := canon.Digest(in.sess.key)
	b := schema.SurfaceApprovalBinding{Capability: in.cap.id, InputDigest: inputDigest, Session: sessDigest,
		RequestID: in.req.ID, ExpiresAtMs: expiresAtMs, Summary: summary}
	d, err := canon.Digest(b)
	return b, d, err
}

func recordSuffix(rec string) string {
	if rec == "" {
		return ""
	}
	return " on " + rec
}
