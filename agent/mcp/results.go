package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/pagetext"
	"github.com/pling-go/pling/schema"
)

// Instructions are the server instructions of a bridge: what a model needs
// to use the tools well, in a few sentences.
const Instructions = `Each tool is the page's own action, run as a person's click would. ` +
	`A "__" name is folded, one tool a kind of row: record is the row's id or whole label. ` +
	`A result gives the value, the page's evidence, the changed states; a failure, its code and the next step. ` +
	`Look before repeating a call that is unconfirmed or failed an expectation. Stop on PERMISSION_DENIED and SESSION_*. ` +
	`A call may wait minutes for a person.`

// BrowsingInstructions are the instructions of a bridge on a browsing
// session (WithBrowser): what the browser.* tools share is said here once,
// not in each tool's description, which every tools/list sends again.
const BrowsingInstructions = Instructions + ` ` +
	`browser.* drive the tab (browser.open a URL); page tools follow it. ` +
	`Prefer them, then webmcp.*, then browser.view and browser.act (unproven).`

// maxValueText bounds the value as it appears in a result's text, in
// characters; structuredContent has more of it (MaxStructuredBytes).
const maxValueText = 600

// valueText is a result's value as the page's words: a string value as
// itself, any other value as its JSON text, quoted after "From the page:"
// (pagetext.Words) — the page's data, which its users may have written,
// never reads as the bridge's — and cut to maxValueText characters, the
// cut said outside the quotes, with where the whole value is (h).
func valueText(v json.RawMessage, h *handover) string {
	t, cut := pagetext.Cut(valueString(v), maxValueText)
	out := pagetext.Words(t)
	if cut > 0 {
		out += h.note(cut)
	}
	return out
}

// feedbackLine is one message of the page's feedback (a role=alert, a
// toast), quoted as the page's.
func feedbackLine(f schema.Feedback) string {
	msg, _ := pagetext.Cut(f.Message, MaxDescriptionLen)
	return "\nThe page says (" + pagetext.Line(f.Level, 20) + "): " + pagetext.Quote(msg)
}

// successText is a success for a model: what ran, the value, the evidence
// and which states changed, in a few short lines — a faithful summary of
// structuredContent, which has the states' old and new values.
func successText(r *agent.Result, note string, h *handover) string {
	var b strings.Builder
	b.WriteString("Done: " + r.Capability)
	if r.Evidence != nil && r.Evidence.Record != "" {
		b.WriteString(" on " + r.Evidence.Record)
	}
	if note != "" {
		b.WriteString(" (" + note + ")")
	}
	b.WriteString(".")
	if len(r.Value) > 0 && string(r.Value) != "null" {
		b.WriteString("\nValue: " + valueText(r.Value, h))
		b.WriteString(h.text())
	}
	if e := r.Evidence; e != nil {
		// The expectations without their values, which are in
		// structuredContent.
		ev := modeltool.EvidenceProof(e, false)
		if e.Summary != "" && !strings.HasSuffix(e.Summary, " ran") {
			ev = append(ev, e.Summary)
		}
		if len(ev) > 0 {
			b.WriteString("\nEvidence: " + strings.Join(ev, "; "))
		}
	}
	writeObservation(&b, r.Observation)
	return b.String()
}

func writeObservation(b *strings.Builder, o *schema.SurfaceObservation) {
	if o == nil {
		return
	}
	if len(o.States) > 0 {
		// The states' names: their old and new values are in
		// structuredContent, the evidence above says what was expected.
		keys := make([]string, 0, len(o.States))
		for k := range o.States {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("\nChanged: " + strings.Join(keys, ", "))
	}
	for _, f := range o.Feedback {
		b.WriteString(feedbackLine(f))
	}
	if n := o.Navigation; n != nil && n.To != "" {
		b.WriteString("\nThe page went to " + n.To)
	}
	// Whether the tool list changed is the bridge's to say (toolsText):
	// the page's capabilities may change only in availability, which
	// leaves the list as it is.
}

// failureText is a business failure for a model: the code and message,
// the next step in one line, then what helps to take it.
func failureText(e *agent.BusinessError) string {
	var text strings.Builder
	msg := strings.TrimSpace(e.Message)
	switch {
	case pageMessage[e.Code]:
		// The page's reason, or what its handler threw: the page's words.
		m, _ := pagetext.Cut(msg, MaxDescriptionLen)
		msg = pagetext.Words(m)
		if !strings.HasSuffix(m, ".") {
			msg += "."
		}
	case msg != "" && !strings.HasSuffix(msg, "."):
		msg += "."
	}
	text.WriteString(string(e.Code) + ": " + msg)
	if next := nextStep(e); next != "" {
		text.WriteString(" Next: " + next)
	}
	// The page's own words (a role=alert, a toast) often say why: "Board
	// name is too short." belongs in the text, not only in
	// structuredContent. They come with the invoke's observation or with
	// the description the client took after the failure.
	var feedback []schema.Feedback
	if o := e.Observation; o != nil {
		feedback = append(feedback, o.Feedback...)
	}
	if e.Observed != nil {
		feedback = append(feedback, e.Observed.Context.Feedback...)
	}
	seen := map[schema.Feedback]bool{}
	for _, f := range feedback {
		if !seen[f] {
			seen[f] = true
			text.WriteString(feedbackLine(f))
		}
	}
	if len(e.Details) > 0 {
		d, _ := schema.Encode(e.Details)
		text.WriteString("\nDetails: " + string(d))
	}
	if e.Resume != "" {
		text.WriteString("\nResume token: " + e.Resume)
	}
	if e.Observed != nil && len(e.Observed.Context.States) > 0 {
		s, _ := schema.Encode(e.Observed.Context.States)
		if len(s) > 400 {
			s = append(s[:400], "…"...)
		}
		text.WriteString("\nStates now: " + string(s))
	}
	return text.String()
}

// pageMessage are the codes whose message is the page's own words: why it
// cannot run now, what its handler threw.
var pageMessage = map[perr.Code]bool{perr.ActionUnavailable: true, perr.ExecutionFailed: true}

// nextSteps are the next steps of the codes whose registry text speaks to
// a page's author or a protocol client rather than to a model calling a
// tool: each says, in the model's words, the one step to take.
var nextSteps = map[perr.Code]string{
	perr.ActionUnavailable: "Do what the reason says first (another page, another row, a state to change); call this tool again only once it is listed available.",
	perr.ActionNotFound:    "This page has no such action now: call browser.page to see where you are and what it offers.",
	perr.InvalidParams:     "Fix the named parameters and call again; leave out the ones you do not mean to change when they have a current value.",
	perr.ExecutionFailed:   "The page's code stopped with this message: read it, fix what it names (often an input), then decide whether to call again.",
	perr.ExpectationFailed: "The action ran but the page did not show the expected change: read what the page says, look (browser.page) before calling again.",
}

// ranButNoValue reports whether an EXECUTION_FAILED says the handler ran
// to its end and only its value could not be sent back (a BigInt, a
// cycle): its effect happened, so the call must not be repeated.
func ranButNoValue(e *agent.BusinessError) bool {
	if e.Code != perr.ExecutionFailed {
		return false
	}
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "returned a value") || strings.Contains(m, "bigint") || strings.Contains(m, "serializ")
}

// didNotFinish reports whether a failure says the page's code did not
// finish in time (the page's handler deadline, a context's).
func didNotFinish(e *agent.BusinessError) bool {
	m := strings.ToLower(e.Message)
	return e.Code == perr.ExecutionFailed && (strings.Contains(m, "did not finish") || strings.Contains(m, "deadline exceeded") || strings.Contains(m, "timed out"))
}

// nextStep is the one next step of a business failure for a model.
func nextStep(e *agent.BusinessError) string {
	if ranButNoValue(e) {
		return "The action ran and its effect happened; only its return value could not be sent. Do not call it again: look at the page (browser.page) to see the result."
	}
	if didNotFinish(e) {
		return "The action did not finish in time; whether its effect happened is unknown. Do not call it again: look at the page (browser.page, or a read tool) to see whether it happened."
	}
	if s, ok := nextSteps[e.Code]; ok {
		return s
	}
	if entry, ok := perr.Lookup(e.Code); ok {
		return entry.Action.En
	}
	return ""
}

// successResult is a success as a tool result: the short account as text,
// and a lean structuredContent for programs — the value, the evidence
// (expectations without the values the changed states already carry), the
// states that changed, the page's feedback, where it went and whether its
// tools changed (the new list itself comes with tools/list_changed). The
// request id and the revision stay out: a model cannot use them through
// MCP, and the bridge resends and re-describes by itself.
func successResult(r *agent.Result, note string, h *handover) *sdk.CallToolResult {
	sc := map[string]any{}
	if r.Value != nil {
		sc["value"] = r.Value
	}
	var changed map[string]schema.StateChange
	if o := r.Observation; o != nil {
		changed = o.States
		addObservation(sc, o)
	}
	if e := leanEvidence(r.Evidence, changed); e != nil {
		sc["evidence"] = e
	}
	// note (a label read as an id, a row brought into view) is for the
	// model, in the text; evidence.record has the id for programs.
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: successText(r, note, h)}}, StructuredContent: sc}
	h.apply(res)
	return res
}

// addObservation puts what an observation says a model needs into sc:
// changed states, feedback, the navigation's target, toolsChanged.
func addObservation(sc map[string]any, o *schema.SurfaceObservation) {
	if len(o.States) > 0 {
		sc["changed"] = o.States
	}
	if len(o.Feedback) > 0 {
		sc["feedback"] = o.Feedback
	}
	if o.Navigation != nil && o.Navigation.To != "" {
		sc["navigatedTo"] = o.Navigation.To
	}
	if o.CapabilitiesChanged {
		sc["toolsChanged"] = true
	}
}

// evidence is schema.Evidence without the capability (the model called
// the tool) and with each expectation's before and after only when the
// changed states do not carry them.
type evidence struct {
	Record       string        `json:"record,omitempty"`
	Records      []string      `json:"records,omitempty"`
	Expectations []expectation `json:"expectations,omitempty"`
	Steps        int           `json:"steps,omitempty"`
	Handoff      string        `json:"handoff,omitempty"`
	Approval     string        `json:"approval,omitempty"`
	Summary      string        `json:"summary,omitempty"`
}

type expectation struct {
	State     string `json:"state"`
	Condition string `json:"condition"`
	Before    any    `json:"before,omitempty"`
	After     any    `json:"after,omitempty"`
	Met       bool   `json:"met"`
}

func leanEvidence(e *schema.Evidence, changed map[string]schema.StateChange) *evidence {
	if e == nil {
		return nil
	}
	out := &evidence{Record: e.Record, Records: e.Records, Steps: e.Steps, Handoff: e.Handoff, Approval: e.Approval}
	if !strings.HasSuffix(e.Summary, " ran") {
		out.Summary = e.Summary
	}
	for _, x := range e.Expectations {
		ex := expectation{State: x.State, Condition: x.Condition, Met: x.Met}
		if _, ok := changed[x.State]; !ok {
			ex.Before, ex.After = x.Before, x.After
		}
		out.Expectations = append(out.Expectations, ex)
	}
	return out
}

// businessResult is a business failure as a tool result with isError: the
// code first, then the message and the registry's next step for people.
// Its structuredContent is the failure, the recovery and the states the
// client observed — not the whole description it observed: recovery
// "describe" says to look again, and the tool list follows by itself
// (tools/list_changed).
func businessResult(e *agent.BusinessError) *sdk.CallToolResult {
	failure := map[string]any{"code": string(e.Code), "message": e.Message}
	if len(e.Details) > 0 {
		failure["details"] = e.Details
	}
	if e.Resume != "" {
		failure["resume"] = e.Resume
	}
	sc := map[string]any{"error": failure}
	if rec := e.Recovery(); rec != perr.RecoverNone {
		sc["recovery"] = rec.String() // "describe": look again; the tool list follows by itself
	}
	if e.Observation != nil {
		addObservation(sc, e.Observation)
	}
	if e.Observed != nil && len(e.Observed.Context.States) > 0 {
		sc["states"] = e.Observed.Context.States
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: failureText(e)}}, StructuredContent: sc}
}

// rpcError is a protocol failure as a JSON-RPC error: data carries the
// Surface code, so a program branches on it, never on the message.
func rpcError(err error) error {
	data := map[string]any{}
	var ue *agent.UnconfirmedError
	var pe *agent.ProtocolError
	var ns *agent.NotSentError
	switch {
	case errors.As(err, &ns):
		data["notSent"] = true
		data["requestId"] = ns.RequestID
	case errors.As(err, &ue):
		data["unconfirmed"] = true
		data["requestId"] = ue.RequestID
		if ue.Protocol != nil {
			data["code"] = string(ue.Protocol.Code)
		}
	case errors.As(err, &pe):
		data["code"] = string(pe.Code)
		data["message"], _ = cutText(pagetext.EscapeText(pe.Message), MaxDescriptionLen)
		if pe.RetryAfterMs > 0 {
			data["retryAfterMs"] = pe.RetryAfterMs
		}
		if len(pe.Details) > 0 {
			data["details"] = pe.Details
		}
		if pe.RequestID != "" {
			data["requestId"] = pe.RequestID
		}
	default:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: errorText(err)}
	}
	raw, _ := schema.Encode(data)
	return &jsonrpc.Error{Code: CodeSurfaceFailure, Message: errorText(err), Data: raw}
}

// errorText is an error's text as a JSON-RPC error's message, which may
// carry the page's words (a protocol failure's message): escaped
// (pagetext.EscapeText) and cut to MaxDescriptionLen characters.
func errorText(err error) string {
	t, _ := cutText(pagetext.EscapeText(err.Error()), MaxDescriptionLen)
	return t
}

// unconfirmedResult is a call whose outcome is unknown — the page's
// handler did not finish in time, or its answer was lost — as a tool
// result a model reads: the Surface code (INTERNAL_ERROR when the page
// sent none), that the effect is unknown, and the one next step: look,
// do not repeat. Not a JSON-RPC error: -32001 is also what an SDK uses
// for its own timeout, and a host shows a model little of an error's
// data.
func unconfirmedResult(ue *agent.UnconfirmedError) *sdk.CallToolResult {
	code := perr.InternalError
	why := "the page's code did not finish, or its answer was lost"
	if ue.Protocol != nil {
		code = ue.Protocol.Code
		if m := strings.TrimSuffix(strings.TrimSpace(ue.Protocol.Message), "."); m != "" {
			why = m
		}
	} else if ue.Cause != nil && (errors.Is(ue.Cause, context.DeadlineExceeded) || strings.Contains(ue.Cause.Error(), "deadline")) {
		why = "the page's code did not finish in time"
	} else if big := (*cdp.AnswerTooLarge)(nil); errors.As(ue.Cause, &big) {
		why = big.Error()
	}
	msg := fmt.Sprintf("%s: whether %s ran is unknown (%s).", code, ue.Capability, why)
	failure := map[string]any{"code": string(code), "message": why}
	return &sdk.CallToolResult{IsError: true,
		Content: []sdk.Content{&sdk.TextContent{Text: msg + " Next: do not call it again; look at the page " +
			"(browser.page, or a read tool) to see whether it happened."}},
		StructuredContent: map[string]any{"error": failure, "unconfirmed": true, "requestId": ue.RequestID, "recovery": "observe"}}
}
