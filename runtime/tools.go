package runtime

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/pagetext"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"
)

func init() { modeltool.Register((*Runtime).tools, (*Runtime).callTool) }

// mirrorWindowMs is how long a WebMCP call of the mirror (js-shim/webmcp.js,
// WINDOW_MS) waits for a person's approval; tools is the mirror's list, so
// an approval tool says this wait, not the approval's own lifetime.
const mirrorWindowMs = 45_000

// tools returns the capabilities a session may invoke now, as model tools
// (modeltool.List), in capability order. session is the session token, "" for none; a
// session that does not verify gets no tools, and one longer than
// schema.MaxRequestBytes, which no request can carry, is SESSION_INVALID
// unread.
func (rt *Runtime) tools(ctx context.Context, session string) ([]modeltool.Tool, error) {
	if len(session) > schema.MaxRequestBytes {
		return nil, perr.New(perr.SessionInvalid, "", nil)
	}
	sess, e := rt.gate.session(ctx, &wire.Request{Session: session, HasSession: session != ""}, rt.cfg.clock.NowMs())
	if e != nil {
		return nil, e
	}
	exp := rt.gate.exposureOf(sess)
	snap := rt.snapshot()
	listed, _ := rt.listing(ctx, snap, exp, rt.regions(ctx, snap), newRowReader(snap, 0), nil)
	tools := make([]modeltool.Tool, 0, len(listed))
	ids := make([]string, len(listed))
	for i, c := range listed {
		ids[i] = c.id
	}
	names := modeltool.Names(ids)
	for i, c := range listed {
		name := names[i]
		a := &c.action
		desc := a.Title
		if a.Description != "" {
			desc = sentences(desc, a.Description)
			if startsWithSentence(a.Description, a.Title) {
				desc = a.Description // a title taken from the description's first sentence is not said twice
			}
		}
		params := inputSchema(a.Params)
		if c.fold != nil {
			if params.Properties == nil {
				params.Properties = map[string]*schema.PropertySchema{}
			}
			params.Properties["record"] = &schema.PropertySchema{Type: "string",
				Description: fmt.Sprintf("The %s record to act on: its id, or its label as people read it (the whole label or its first word)", c.fold.kind)}
			params.Required = append([]string{"record"}, params.Required...)
			desc = sentences(desc, offscreenRule(c, names, listed))
		}
		risk := riskOf(a)
		ann := modeltool.Annotations{
			ReadOnlyHint:         risk == schema.RiskRead,
			ConsequentialHint:    risk == schema.RiskDestructive || a.Approval,
			UntrustedContentHint: risk == schema.RiskRead,
		}
		var waits int64
		switch {
		case a.Handoff != nil:
			waits = rt.cfg.handoffTimeoutMs
			if a.Handoff.TimeoutMs > 0 {
				waits = a.Handoff.TimeoutMs
			}
			desc = sentences(desc, "A person finishes it on the page; the call waits for them up to "+minutes(waits))
		case a.Approval:
			// A mirrored call's approval lapses with the mirror's window
			// (approval.go, WithCallWindow), so the wait said is the
			// shorter of the two.
			waits = min(rt.cfg.approvalTTLMs, mirrorWindowMs)
			desc = sentences(desc, "A person on the page must approve each call; the call waits for them up to "+minutes(waits))
		}
		// The title and description are the page's words; what a reader
		// cannot see in them is escaped for every consumer of the list.
		tools = append(tools, modeltool.Tool{Name: name, Title: pagetext.EscapeText(a.Title), Description: pagetext.EscapeText(desc), Parameters: params, Capability: c.id, Annotations: ann, WaitsMs: waits})
	}
	return tools, nil
}

// sentences joins a description and the next sentence: ". " between
// them, or only a space after text that already ends a sentence (a page's
// "…ships it." is not followed by "..").
func sentences(desc, next string) string {
	if desc == "" {
		return next
	}
	r, _ := utf8.DecodeLastRuneInString(desc)
	if strings.ContainsRune(".!?…。！？", r) {
		return desc + " " + next
	}
	return desc + ". " + next
}

// startsWithSentence reports whether text begins with the sentence s
// (s, then its end: a stop, or nothing more), as a title taken from a
// description's first sentence does (a WebMCP declarative form's
// tooldescription): the description then says the title already.
func startsWithSentence(text, s string) bool {
	s = strings.TrimRight(s, ".!?…。！？")
	rest, ok := strings.CutPrefix(text, s)
	if !ok || s == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || strings.ContainsRune(".!?…。！？", r)
}

// minutes says a wait in words: "5 minutes", "90 seconds".
func minutes(ms int64) string {
	if ms >= 60_000 && ms%60_000 == 0 {
		if ms == 60_000 {
			return "1 minute"
		}
		return strconv.FormatInt(ms/60_000, 10) + " minutes"
	}
	return strconv.FormatInt((ms+999)/1000, 10) + " seconds"
}

// offscreenRule says which records a folded tool acts on, as the MCP
// bridge says it (agent/mcp): any record, or the ones in view, or those
// out of view after a listed read-only tool of the kind that runs on any
// record brings one into view.
func offscreenRule(c *capEntry, names []string, listed []*capEntry) string {
	kind := c.fold.kind
	if c.action.Record != nil && c.action.Record.AllowOffscreen {
		return fmt.Sprintf("Any %s, in view or not", kind)
	}
	for i, o := range listed {
		if o != c && o.fold != nil && o.fold.kind == kind && o.action.Record != nil && o.action.Record.AllowOffscreen && riskOf(&o.action) == schema.RiskRead {
			return fmt.Sprintf("Only %ss in view: call %s first to bring one into view", kind, names[i])
		}
	}
	return fmt.Sprintf("Only %ss in view (else ACTION_UNAVAILABLE: scroll or filter the page first)", kind)
}

// callTool runs a model tool call (modeltool.Call): the tool name from tools and the
// arguments text the model produced. Arguments that are not one JSON object
// give an ok:true response whose result.error is INVALID_ARGS; otherwise the
// call becomes an invoke request with a fresh id and takes the whole path
// (gate included). It returns the Surface response text.
//
// A session, name or arguments text longer than schema.MaxRequestBytes
// cannot fit in the request the call becomes: the call is refused as
// Handle refuses such a request (refuse with wire.ReasonTooLarge), before
// anything is read or a tool call id drawn, so that a host may judge it by
// its length alone (a JS string's UTF-16 length: UTF-8 is never shorter).
func (rt *Runtime) callTool(ctx context.Context, session, name, arguments string) []byte {
	if max(len(session), len(name), len(arguments)) > schema.MaxRequestBytes {
		return rt.refuse(wire.ReasonTooLarge)
	}
	id, err := rt.toolCallID()
	if err != nil {
		return mustEncode(wire.FailureResponse(nil, perr.New(perr.InternalError, "", nil)))
	}
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(arguments))
	dec.UseNumber()
	if strings.TrimSpace(arguments) == "" {
		args = map[string]any{}
	} else if err := dec.Decode(&args); err != nil || args == nil {
		return invalidArgs(id, "The arguments are not one JSON object")
	} else if _, err := dec.Token(); err != io.EOF {
		return invalidArgs(id, "The arguments are not one JSON object")
	}
	tools, terr := rt.tools(ctx, session)
	capability := ""
	if terr == nil {
		for _, t := range tools {
			if t.Name == name {
				capability = t.Capability
			}
		}
	}
	if capability == "" {
		// Unknown to this session: let the gate and executor answer
		// (CAPABILITY_NOT_EXPOSED, ACTION_NOT_FOUND or a session error).
		capability = name
	}
	req := map[string]any{"protocol": schema.Protocol, "id": id, "method": "invoke", "capability": capability, "input": args}
	if session != "" {
		req["session"] = session
	}
	return rt.handleValue(ctx, req)
}

func invalidArgs(id, msg string) []byte {
	e := perr.New(perr.InvalidArgs, msg, nil)
	b, _ := schema.Encode(schema.SurfaceInvokeResult{Error: &schema.ActionFailure{Code: string(e.Code()), Message: e.Message()}})
	return resultBytes(id, b)
}

func (rt *Runtime) toolCallID() (string, error) {
	var b [8]byte
	if _, err := io.ReadFull(rt.cfg.random, b[:]); err != nil {
		return "", err
	}
	return "tool_" + hex.EncodeToString(b[:]), nil
}
