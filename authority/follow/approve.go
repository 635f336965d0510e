package follow

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/pling-go/pling/authority/internal/urlsafe"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// Approvals outside the page (docs/authority.md "Approvals outside the
// page"). The page sends the request in the clear to the authority, which
// computes its binding; a person approves on the authority's screen; the
// page collects the approval the authority signed and accepts it only
// when it verifies with the keys the follower follows, for this page's
// origin, for exactly the binding the runtime built for what it is about
// to run, unexpired, and once. Nothing a script in the page can do —
// click, call a dialog, post a decision, rewrite the request — produces
// that signature for the request the page runs.

// PollEveryMs is how often the page asks the authority for the approval
// while no one has decided (the authority's answer may ask for longer).
const PollEveryMs = 1000

// ApprovalSent is told an approval's id once the authority holds the
// request, so the page can point the person at the authority's screen.
// The id is no credential: the screen is on the authority's origin, where
// no script of the page reads or posts it, and collecting needs the poll
// secret only the page holds. requestID is the invoke's, so the agent that
// sent it can point its person at the same screen.
type ApprovalSent func(ch schema.SurfaceApprovalChallenge, requestID, approvalID string)

// Approver returns the runtime.Approver that asks the authority. sent,
// when not nil, is called once the authority holds a challenge.
func (f *Follower) Approver(sent ApprovalSent) runtime.Approver {
	return &authorityApprover{f: f, sent: sent}
}

type authorityApprover struct {
	f     *Follower
	sent  ApprovalSent
	guard runtime.ApprovalGuard
}

// Approve implements runtime.Approver. The authority needs the request in
// the clear (ApproveRequest), which a challenge alone does not carry: the
// answer is closed at once, and nothing runs.
func (a *authorityApprover) Approve(ctx context.Context, ch schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision {
	out := make(chan schema.SurfaceApprovalDecision)
	close(out)
	return out
}

// ApproveRequest implements runtime.RequestApprover. It answers approved
// only for an approval that verified for the binding the runtime computed
// (ch.Binding); denied when the authority says a person denied it; and
// nothing otherwise (no delegated session this follower verified, the
// authority unreachable, the approval expired, forged or for another
// binding), so the runtime's wait runs out and nothing runs: fail closed.
func (a *authorityApprover) ApproveRequest(ctx context.Context, ch schema.SurfaceApprovalChallenge, req runtime.ApprovalRequest) <-chan schema.SurfaceApprovalDecision {
	out := make(chan schema.SurfaceApprovalDecision, 1)
	go func() {
		approval, approved, decided := a.ask(ctx, ch, req)
		if decided {
			out <- schema.SurfaceApprovalDecision{Binding: ch.Binding, Approved: approved, Approval: approval}
		}
	}()
	return out
}

// ask answers the signed approval with approved.
func (a *authorityApprover) ask(ctx context.Context, ch schema.SurfaceApprovalChallenge, req runtime.ApprovalRequest) (approval string, approved, decided bool) {
	f := a.f
	d, ok := f.session(req.SessionKey)
	if !ok {
		return "", false, false // only a delegated session may ask the authority
	}
	// The authority computes the binding from req and shows the person
	// req; ch goes along for the page's words (titles, the agent's name).
	body, err := json.Marshal(map[string]any{"sessionId": d.id, "audience": f.audience, "request": req, "challenge": ch})
	if err != nil {
		return "", false, false
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	st, resp, err := f.tr.Do(cctx, "POST", f.base+"/v1/approvals", d.token, body)
	cancel()
	var created struct {
		ID         string `json:"id"`
		PollSecret string `json:"pollSecret"`
	}
	if err != nil || st != 201 || json.Unmarshal(resp, &created) != nil || !urlsafe.ID(created.ID) || created.PollSecret == "" {
		return "", false, false
	}
	if a.sent != nil {
		a.sent(ch, req.RequestID, created.ID)
	}
	poll, _ := json.Marshal(map[string]string{"pollSecret": created.PollSecret})
	url := f.base + "/v1/approvals/" + created.ID + "/token"
	for {
		select {
		case <-ctx.Done():
			return "", false, false
		case <-f.clock.After(PollEveryMs):
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		st, resp, err := f.tr.Do(cctx, "POST", url, "", poll)
		cancel()
		if err != nil {
			continue // the authority may come back before the approval expires
		}
		var ans struct {
			Status   string `json:"status"`
			Approval string `json:"approval"`
			Code     string `json:"code"`
		}
		_ = json.Unmarshal(resp, &ans)
		switch {
		case st == 202:
			continue
		case st == 200 && ans.Status == "approved":
			if !a.accept(ctx, ans.Approval, ch.Binding) {
				return "", false, true
			}
			return ans.Approval, true, true
		case strings.Contains(string(resp), "DELEGATION_REVOKED"):
			return "", false, true // a person denied it
		default:
			return "", false, false // expired, spent or refused: nothing runs
		}
	}
}

// accept verifies the approval with the followed keys and accepts its id
// once.
func (a *authorityApprover) accept(ctx context.Context, approval, binding string) bool {
	f := a.f
	now := f.clock.NowMs()
	parts := strings.Split(approval, ".")
	if len(parts) != 4 || parts[0] != runtime.ApprovalPrefix || len(parts[1]) > 64 {
		return false
	}
	if !f.knows(parts[1], now) {
		f.refetch(ctx, parts[1], now)
	}
	tv, err := f.verifier(now)
	if err != nil {
		return false
	}
	c, err := tv.VerifyApproval(approval, binding, now)
	if err != nil {
		return false
	}
	return a.guard.Accept(c.ID, c.ExpiresAtMs, now)
}
