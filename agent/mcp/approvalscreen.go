package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/pagetext"
)

// The approval screen in the agent's host: a page with approvals
// "authority" sends the request to its authority, and the person approves
// on the authority's screen (ApprovalPath?id=… on the authority's origin),
// never in the page. A person who talks to the agent in an MCP host (Claude,
// VS Code, Cursor) is not looking at the page: when the host takes URL
// elicitations (MCP 2025-11-25), the bridge asks it to open that screen
// for the person. The approval itself still happens only on the screen,
// under the person's own session with the authority, and the page still
// runs only what the authority signed; the host's answer only informs:
// decline or cancel cancels the call, so nothing runs later; accept keeps
// waiting for the page's outcome. The page only names the approval's id,
// and any script of the page can name another: the bridge opens an
// approval only once the authority says it is this call's
// (approvalcheck.go), and tells the host when it is done with
// (notifications/elicitation/complete). A page approval (approvals "page") has
// no authority's id, and is never asked in the host: the person is in the
// browser there.

// ApprovalPath is the authority's approval screen, on its origin
// (docs/authority.md).
const ApprovalPath = "/approve"

// WithApprovalScreen names the authority whose approval screen the bridge
// asks the host to open: its base URL (scheme://host[:port][/path]), one
// the agent knows (pling mcp --authority), never the page's word, so a
// page cannot have the host open an address of its choice. The page says
// only the approval's id. Without it, or with a host that does not take
// URL elicitations, a call waits as before (a progress notice).
func WithApprovalScreen(authority string) Option {
	return func(o *options) { o.screen = strings.TrimRight(authority, "/") }
}

// ApprovalScreenURL is the address of approval id's screen at authority;
// false when authority is no http(s) URL or id is no approval id.
func ApprovalScreenURL(authority, id string) (string, bool) {
	u, err := url.Parse(strings.TrimRight(authority, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	if id == "" || len(id) > 64 || strings.TrimLeft(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return "", false
	}
	return u.String() + ApprovalPath + "?id=" + id, true
}

// urlElicitation reports whether the host declared URL elicitations.
func urlElicitation(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil && p.Capabilities.Elicitation.URL != nil
}

// pendingCall is a tool call whose invoke waits for the authority's
// approval while the host shows the person the screen: the first
// tools/call answered "input required" (InputRequests, one URL
// elicitation) under a request state naming it, and the host sends the
// call again with its answer and that state (MCP multi round-trip
// requests; for a host on an older protocol the SDK asks it in the first
// request and calls again by itself).
type pendingCall struct {
	screens  chan agent.Waiting // the notice that the authority holds the approval
	done     chan struct{}      // the invoke and what follows it ended: res, err
	res      *sdk.CallToolResult
	err      error
	cancel   context.CancelFunc // cancels the invoke
	declined atomic.Value       // the host's action, "decline" or "cancel"

	// The session and the tool the call came in: only they resume it.
	session    *sdk.ServerSession
	capability string
}

func (pc *pendingCall) screen(w agent.Waiting) {
	select {
	case pc.screens <- w:
	default: // a few held at once: the call checks them in turn and opens the first that is its own
	}
}

// maxPendingCalls bounds the calls waiting for a host's answer; past it a
// call waits as without elicitations.
const maxPendingCalls = 64

// pendingKeep is how long an ended call whose host never called again is
// kept for it.
const pendingKeep = 10 * time.Minute

// invokeAskingHost invokes, and when the page says its authority holds
// the approval, answers "input required": a URL elicitation of the
// approval screen, under a fresh request state; the invoke goes on.
func (b *Bridge) invokeAskingHost(ctx context.Context, req *sdk.CallToolRequest, capability string, input map[string]any,
	rec, note string, deferred bool) (*sdk.CallToolResult, error) {
	// What the call sends, read before the invoke may go on with input
	// (a record it looks up again).
	sent := inputJSON(input)
	// The invoke outlives this request (it waits for the person while
	// the host asks them); it ends with the host's call after it, with a
	// decline, or with the page's own wait for the approval.
	ictx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pc := &pendingCall{screens: make(chan agent.Waiting, 4), done: make(chan struct{}), cancel: cancel,
		session: req.Session, capability: capability}
	go func() {
		defer close(pc.done)
		defer cancel()
		pc.res, pc.err = b.invokeTool(ictx, ictx, req, capability, input, rec, note, deferred, pc)
	}()
	for ignored := 0; ; {
		var w agent.Waiting
		select {
		case <-pc.done:
			return pc.res, pc.err
		case <-ctx.Done():
			cancel()
			<-pc.done
			return pc.res, pc.err
		case w = <-pc.screens:
		}
		aa, why := b.approvalOfCall(ctx, w, capability, sent)
		if why != "" {
			// Any script of the page can name an approval: one that is
			// not this call's is never shown to the person as this call's.
			ignored++
			b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: the page named an approval that is not this call's; not asking the host to open it",
				slog.String("approval", pagetext.Line(w.Approval, 64)), slog.String("capability", pagetext.Line(capability, 80)),
				slog.String("why", why))
			if ignored < maxIgnoredScreens {
				continue
			}
			return b.waitWithoutHost(ctx, pc, cancel)
		}
		u, _ := ApprovalScreenURL(b.screen, w.Approval)
		state, registered := b.holdCall(pc)
		if !registered {
			return b.waitWithoutHost(ctx, pc, cancel)
		}
		msg := "Approve " + strconv.Quote(pagetext.Line(w.Capability, 80))
		if rec != "" {
			msg += " on " + strconv.Quote(pagetext.Line(rec, 80))
		}
		msg += "? The site asks you on its authority's approval screen, which shows exactly what will run: approve or deny there. Declining here cancels the call."
		eid := "pling-approval-" + w.Approval
		go b.completeWhenEnded(req.Session, pc, aa, eid)
		return &sdk.CallToolResult{RequestState: state, InputRequests: sdk.InputRequestMap{
			approvalInput: &sdk.ElicitParams{Mode: "url", URL: u, ElicitationID: eid, Message: msg}}}, nil
	}
}

// maxIgnoredScreens bounds the approvals a call checks at the authority
// and ignores (a page that keeps naming others): past it the call waits
// as without elicitations.
const maxIgnoredScreens = 8

// waitWithoutHost waits for the call as when the host takes no
// elicitations.
func (b *Bridge) waitWithoutHost(ctx context.Context, pc *pendingCall, cancel context.CancelFunc) (*sdk.CallToolResult, error) {
	select {
	case <-pc.done:
	case <-ctx.Done():
		cancel()
		<-pc.done
	}
	return pc.res, pc.err
}

// approvalPoll is how often the bridge asks the authority whether an
// approval the host shows was decided.
const approvalPoll = time.Second

// completeWhenEnded tells the host, once, that the approval screen it was
// asked to open is done with (notifications/elicitation/complete, MCP URL
// elicitations): when the authority says the approval was approved,
// denied or expired, or when the call ended (cancelled, declined, timed
// out), whichever is first, so a host can close its prompt.
func (b *Bridge) completeWhenEnded(ss *sdk.ServerSession, pc *pendingCall, a authorityApproval, eid string) {
	if ss == nil {
		return
	}
	t := time.NewTicker(approvalPoll)
	defer t.Stop()
	for ended := false; !ended; {
		select {
		case <-pc.done:
			ended = true
		case <-t.C:
			r, err := a.read(context.Background())
			ended = err == nil && r.Status != "pending"
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), approvalCheckTimeout)
	defer cancel()
	if err := ss.NotifyElicitationComplete(ctx, &sdk.ElicitationCompleteParams{ElicitationID: eid}); err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: the elicitation's completion notice failed", slog.String("error", err.Error()))
	}
}

// approvalInput is the InputRequests key of the approval screen.
const approvalInput = "approval"

// holdCall keeps pc for the host's next call under a fresh, unguessable
// state; false when too many calls wait.
func (b *Bridge) holdCall(pc *pendingCall) (string, bool) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", false
	}
	state := "pling-call-" + hex.EncodeToString(raw[:])
	b.pendMu.Lock()
	defer b.pendMu.Unlock()
	if b.pending == nil {
		b.pending = map[string]*pendingCall{}
	}
	if len(b.pending) >= maxPendingCalls {
		return "", false
	}
	b.pending[state] = pc
	go func() {
		<-pc.done
		time.AfterFunc(pendingKeep, func() { b.takeCall(state, nil, "", true) })
	}()
	return state, true
}

// takeCall takes the call held under state for the session and tool it
// came in; sweep takes it whoever asks.
func (b *Bridge) takeCall(state string, ss *sdk.ServerSession, capability string, sweep bool) *pendingCall {
	b.pendMu.Lock()
	defer b.pendMu.Unlock()
	pc := b.pending[state]
	if pc == nil || (!sweep && (ss == nil || pc.session != ss || pc.capability != capability)) {
		return nil
	}
	delete(b.pending, state)
	return pc
}

// resumeCall is the host's call after it asked the person: decline or
// cancel cancels the invoke (the page is told; nothing runs); accept
// waits for the page's outcome, which the approval screen decides.
func (b *Bridge) resumeCall(ctx context.Context, req *sdk.CallToolRequest, capability string) (*sdk.CallToolResult, error) {
	pc := b.takeCall(req.Params.RequestState, req.Session, capability, false)
	if pc == nil {
		e := perr.New(perr.InvalidArgs, "This call's request state is unknown or was used: call the tool again", nil)
		return businessResult(&agent.BusinessError{Code: e.Code(), Message: e.Message(), Capability: capability}), nil
	}
	action := "cancel" // no answer is no approval
	if er, ok := req.Params.InputResponses[approvalInput].(*sdk.ElicitResult); ok && er != nil {
		action = er.Action
	}
	if action != "accept" {
		pc.declined.Store(action)
		pc.cancel()
	}
	select {
	case <-pc.done:
	case <-ctx.Done():
		// The host gave up on the call: nothing runs after it was told
		// the call failed.
		pc.cancel()
		<-pc.done
	}
	return pc.res, pc.err
}

// declinedResult is a call the person declined in the host: the page was
// told to cancel it and answered that nothing ran.
func declinedResult(capability, action string, err error) (*sdk.CallToolResult, bool) {
	var ue *agent.UnconfirmedError
	if errors.As(err, &ue) {
		return nil, false // the page did not confirm: say so as for any call
	}
	var be *agent.BusinessError
	if !errors.As(err, &be) {
		return nil, false
	}
	what := "declined"
	if action != "decline" {
		what = "dismissed"
	}
	text := "Cancelled: the person " + what + " the approval of " + pagetext.Line(capability, 200) +
		" in the host; the page cancelled the call and nothing ran (" + string(be.Code) + "). Do not retry unless the person asks."
	r := businessResult(be)
	r.Content = []sdk.Content{&sdk.TextContent{Text: text}}
	return r, true
}
