package follow

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/sessionkey"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// The site's server checks what a page's handler forwards (docs/authority.md
// "What the site's server checks"). Exposure, scope and in-page approval
// hold inside the page only: a script that runs before pling.js, or an
// agent with DevTools, can run the page's handler with anything. So a
// handler forwards the session token and, for an approved invoke, the
// approval the authority signed, and the server refuses a consequential
// request unless the approval is for exactly what it is about to do.

// The headers a page's handler sends them in: call.headers in a page holds
// both, ready for fetch.
const (
	SessionHeader  = "Pling-Session"
	ApprovalHeader = "Pling-Approval"
)

// Call is what the site's server is about to do, in its own terms: never
// read from the page's word for it, but from the request it serves (the
// route, the record it names, the body it will act on).
type Call struct {
	// Capability is the capability id as the page declares it, folded for
	// a row action (void@invoice).
	Capability string
	// Record is the row of a row action ("" for none).
	Record string
	// Input is the action's input as the page's handler was given it
	// (defaults applied; a row action's "record" may be in it or in
	// Record). Another value, one member more or less, is another input.
	Input map[string]any
	// NeedsApproval refuses the call unless a person approved exactly
	// it on the authority's screen.
	NeedsApproval bool
}

// Caller is who a checked call comes from.
type Caller struct {
	// Session is the verified session: Subject (compare it with the
	// user the site has signed in), Scope, Agent, expiry.
	Session schema.SurfaceSession
	// Approval is the verified approval's claims (zero when the call
	// did not need one).
	Approval runtime.ApprovalClaims
}

// CheckCall verifies what a page's handler forwarded for c: session must
// be a live token of the followed authority for this audience, not
// revoked, whose scope covers c.Capability; when c.NeedsApproval,
// approval must be the authority's signature over the binding computed
// here from c and that session, unexpired, and not used before with this
// follower's server checks. Anything else is a registered error
// (SESSION_REQUIRED, SESSION_INVALID, SESSION_EXPIRED, SESSION_REVOKED,
// PERMISSION_DENIED), and the server should do nothing.
func (f *Follower) CheckCall(ctx context.Context, session, approval string, c Call) (Caller, error) {
	now := f.clock.NowMs()
	if session == "" {
		return Caller{}, perr.New(perr.SessionRequired, "The request carries no session token ("+SessionHeader+")", nil)
	}
	ss, err := f.Verify(ctx, session, now)
	if err != nil {
		return Caller{}, err
	}
	switch {
	case ss.Revoked:
		return Caller{}, perr.New(perr.SessionRevoked, "", nil)
	case now >= ss.ExpiresAtMs:
		return Caller{}, perr.New(perr.SessionExpired, "", nil)
	case ss.Audience != f.audience:
		return Caller{}, refused("The session is bound to another origin")
	case !runtime.MatchAny(ss.Scope, c.Capability):
		return Caller{}, perr.New(perr.PermissionDenied, "The session's scope does not cover this capability", nil)
	}
	caller := Caller{Session: ss}
	if !c.NeedsApproval {
		return caller, nil
	}
	deny := func(msg string) (Caller, error) { return Caller{}, perr.New(perr.PermissionDenied, msg, nil) }
	if approval == "" {
		return deny("No person approved this request (no " + ApprovalHeader + ")")
	}
	parts := strings.Split(approval, ".")
	if len(parts) != 4 || parts[0] != runtime.ApprovalPrefix || len(parts[1]) > 64 || len(approval) > runtime.MaxTokenLen {
		return deny("The approval is malformed")
	}
	// The claims are read before the signature is checked only to learn
	// the binding's fields the server cannot know; VerifyApproval then
	// checks the signature over them and the binding computed here.
	var claimed runtime.ApprovalClaims
	payload, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || json.Unmarshal(payload, &claimed) != nil {
		return deny("The approval's claims are malformed")
	}
	if claimed.Session != sessionkey.Digest(session) {
		return deny("The approval is for another session")
	}
	input := make(map[string]any, len(c.Input)+1)
	for k, v := range c.Input {
		input[k] = v
	}
	if c.Record != "" {
		input["record"] = c.Record
	}
	binding, err := runtime.ApprovalRequest{Capability: c.Capability, Input: input, Session: claimed.Session,
		RequestID: claimed.RequestID, ExpiresAtMs: claimed.ExpiresAtMs, Summary: claimed.Summary}.Binding()
	if err != nil {
		return deny("The input is not JSON an approval can be bound to")
	}
	if !f.knows(parts[1], now) {
		f.refetch(ctx, parts[1], now)
	}
	tv, err := f.verifier(now)
	if err != nil {
		return deny("The server has no live key of its authority")
	}
	cl, err := tv.VerifyApproval(approval, binding, now)
	if err != nil {
		return Caller{}, err
	}
	if !f.serverGuard.Accept(cl.ID, cl.ExpiresAtMs, now) {
		return deny("The approval was used already")
	}
	caller.Approval = cl
	return caller, nil
}
