package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/pagetext"
	"github.com/pling-go/pling/schema"
)

// handler is the tool handler of one capability: an invoke through the
// client.
func (b *Bridge) handler(capability string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if req.Params.RequestState != "" {
			// The host answered the approval screen it was asked to open.
			return b.resumeCall(ctx, req, capability)
		}
		input, ok := arguments(req.Params.Arguments)
		if !ok {
			e := perr.New(perr.InvalidArgs, "The arguments are not one JSON object", nil)
			return businessResult(&agent.BusinessError{Code: e.Code(), Message: e.Message(), Capability: capability}), nil
		}
		var note string
		rec, _ := input["record"].(string)
		failed, _, deferred := b.resolveRecord(ctx, capability, input, &note, false)
		if failed != nil {
			return failed, nil
		}
		if b.screen == "" || !urlElicitation(req.Session) {
			return b.invokeTool(ctx, ctx, req, capability, input, rec, note, deferred, nil)
		}
		return b.invokeAskingHost(ctx, req, capability, input, rec, note, deferred)
	}
}

// invokeTool is one tool call's invoke: through ictx, and what follows it
// (the tool list, the navigation, the result) through ctx. With pc (the
// host may be asked to open the approval screen), the page's notice that
// its authority holds the approval goes to pc.screens, and a call the
// person declined in the host ends saying so.
func (b *Bridge) invokeTool(ctx, ictx context.Context, req *sdk.CallToolRequest, capability string, input map[string]any,
	rec, note string, deferred bool, pc *pendingCall) (*sdk.CallToolResult, error) {
	var opts []agent.InvokeOption
	token := req.Params.GetProgressToken()
	if (token != nil || pc != nil) && req.Session != nil {
		n := 0.0
		opts = append(opts, agent.OnWaiting(func(w agent.Waiting) {
			if w.Approval != "" {
				if pc != nil {
					pc.screen(w)
				}
				return // it follows the waiting notice of the same approval
			}
			if token == nil {
				return
			}
			// The host asked for progress: say when the page asks a
			// person, so the call is not taken for stuck.
			n++
			err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token,
				Message: WaitingMessage(w), Progress: n})
			if err != nil {
				b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: progress notification failed", slog.String("error", err.Error()))
			}
		}))
	}
	before := b.unavailableNow()
	mark := b.markNav()
	res, err := b.client.Invoke(ictx, capability, input, opts...)
	if pc != nil && err != nil {
		if action, _ := pc.declined.Load().(string); action != "" {
			if r, ok := declinedResult(capability, action, err); ok {
				return r, nil
			}
		}
	}
	if deferred && recordRefused(err) {
		// The page refused a record the last describe did not list:
		// look at every record now (a describe), as the call did not
		// before it went, and send it again if that brought the
		// record into view.
		failed, revealed, _ := b.resolveRecord(ctx, capability, input, &note, true)
		if failed != nil {
			return failed, nil
		}
		if revealed {
			res, err = b.client.Invoke(ictx, capability, input, opts...)
		}
	}
	if err == nil && note == "" && res.Evidence != nil && rec != "" && res.Evidence.Record != "" && res.Evidence.Record != rec {
		note = rec + " is " + res.Evidence.Record // a label the page resolved
	}
	b.follow(ctx, res, err)
	var to string
	var tools []string
	if b.browser != nil {
		to, tools = b.followNavigation(ctx, mark)
		b.publish(ctx) // what the look after the invoke saw, if it did not publish
	}
	avail := ""
	if to == "" {
		avail = b.availabilityText(before, b.unavailableNow()) + b.toolsText(mark.names)
	}
	if err == nil {
		r := successResult(res, note, b.handOver(req.Session, res.Value, maxValueText))
		r.Content[0].(*sdk.TextContent).Text += avail
		b.markToolsChanged(r, mark.names, to)
		navigationText(r, to, tools)
		b.takeDownloads(ctx, req.Session, r)
		return r, nil
	}
	var ue *agent.UnconfirmedError
	if errors.As(err, &ue) {
		r := unconfirmedResult(ue)
		navigationText(r, to, tools)
		return r, nil
	}
	var be *agent.BusinessError
	if errors.As(err, &be) {
		r := businessResult(be)
		r.Content[0].(*sdk.TextContent).Text += avail
		b.markToolsChanged(r, mark.names, to)
		navigationText(r, to, tools)
		if note != "" && be.Code == perr.ActionNotFound {
			// The record does not exist; the page did not change: say
			// so, with what an id and a label look like, in place of
			// the registry's "describe again".
			r.Content[0].(*sdk.TextContent).Text = string(be.Code) + ": " + note
		}
		return r, nil
	}
	return nil, rpcError(err)
}

// WaitingMessage is the progress message of a Waiting notice, for people:
// "Waiting for a person to approve refund@order (up to 5m0s)".
func WaitingMessage(w agent.Waiting) string {
	what := "approve"
	if w.Kind == "handoff" {
		what = "finish their part of"
	}
	return fmt.Sprintf("Waiting for a person to %s %s (up to %v)", what, pagetext.Line(w.Capability, 200), w.Timeout)
}

// follow refreshes the tool list when an invoke says the page changed.
func (b *Bridge) follow(ctx context.Context, res *agent.Result, err error) {
	var obs *schema.SurfaceObservation
	stale := false
	if res != nil {
		obs = res.Observation
	}
	var be *agent.BusinessError
	if errors.As(err, &be) {
		obs = be.Observation
		stale = be.Recovery() == perr.RecoverDescribe
	}
	var pe *agent.ProtocolError
	if errors.As(err, &pe) && pe.Recovery() == perr.RecoverDescribe {
		stale = true
	}
	if obs != nil && (obs.CapabilitiesChanged || obs.Revision != b.Revision()) {
		stale = true
	}
	if !stale {
		return
	}
	if err := b.refreshQuietly(ctx); err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: describe after invoke failed", slog.String("error", err.Error()))
	}
}

// arguments reads tool-call arguments: absent or null is {}; anything but
// one JSON object is not accepted (INVALID_ARGS, docs/protocol.md §4.2).
func arguments(raw json.RawMessage) (map[string]any, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return map[string]any{}, true
	}
	d := json.NewDecoder(bytes.NewReader(t))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil || d.More() {
		return nil, false
	}
	return m, true
}

// known reports whether name is a tool the bridge lists now.
func (b *Bridge) known(name string) bool {
	if b.browser != nil && strings.HasPrefix(name, "browser.") {
		return true // the SDK answers a misspelt browser tool itself
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.tools[name]
	return ok
}

// unknownTool answers a call of a tool the page does not offer (now): a
// result a model reads — which page it is on and what to do — rather
// than a JSON-RPC "unknown tool", which reads as "the site cannot do it".
func (b *Bridge) unknownTool(name string) *sdk.CallToolResult {
	b.mu.Lock()
	url := b.page.URL
	b.mu.Unlock()
	msg := fmt.Sprintf("This page has no tool %q: it belonged to a page the tab has left, or was never listed.", name)
	next := "list the tools again and call one of them."
	if b.browser != nil {
		if url != "" {
			msg = fmt.Sprintf("This page (%s) has no tool %q: it belonged to a page the tab has left, or was never listed.", url, name)
		}
		next = "call browser.page to see this page's tools, or browser.open the page that has it."
	}
	return &sdk.CallToolResult{IsError: true,
		Content:           []sdk.Content{&sdk.TextContent{Text: string(perr.ActionNotFound) + ": " + msg + " Next: " + next}},
		StructuredContent: map[string]any{"error": map[string]any{"code": string(perr.ActionNotFound), "message": msg}}}
}

// toolsText says, for a result, that the tool list changed during the
// call (capabilities came or went): "The tool list changed: new x; gone
// y." Nothing when it did not — availability alone leaves it as it was.
func (b *Bridge) toolsText(before []string) string {
	b.mu.Lock()
	now := b.toolNamesLocked()
	b.mu.Unlock()
	var added, gone []string
	for _, n := range now {
		if !slices.Contains(before, n) {
			added = append(added, n)
		}
	}
	for _, n := range before {
		if !slices.Contains(now, n) {
			gone = append(gone, n)
		}
	}
	if len(added) == 0 && len(gone) == 0 {
		return ""
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "new "+strings.Join(added, ", "))
	}
	if len(gone) > 0 {
		parts = append(parts, "gone "+strings.Join(gone, ", "))
	}
	return "\nThe tool list changed: " + strings.Join(parts, "; ") + "."
}

// markToolsChanged makes structuredContent.toolsChanged say whether the
// list changed in the call, not whether the page's capabilities did.
func (b *Bridge) markToolsChanged(r *sdk.CallToolResult, before []string, to string) {
	sc, _ := r.StructuredContent.(map[string]any)
	if sc == nil || to != "" {
		return // a navigation says it itself
	}
	b.mu.Lock()
	now := b.toolNamesLocked()
	b.mu.Unlock()
	if slices.Equal(now, before) {
		delete(sc, "toolsChanged")
	} else {
		sc["toolsChanged"] = true
	}
}
