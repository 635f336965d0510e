package modeltool

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/pagetext"
	"github.com/pling-go/pling/schema"
)

// maxToolValue bounds the value as a tool result's text shows it.
const maxToolValue = 600

// Text is a Surface response (an invoke's) written for a model, in a
// few short lines, code first: what happened, the proof the page
// confirmed, what changed, and the next step. It is what a WebMCP
// consumer reads (webmcp.js returns it once, with the response as the
// structured part where the consumer keeps one apart), so the next steps
// and recovery hints live in the page, not in one bridge. A response it
// cannot read is said so in one line. Every character a reader cannot
// see (zero-width, bidi, tag characters, controls) is escaped in it
// (pagetext.EscapeText): the value and the feedback are the page's data,
// which its users may have written.
func Text(resp []byte) string { return pagetext.EscapeText(text(resp)) }

func text(resp []byte) string {
	var r struct {
		OK     bool `json:"ok"`
		Result *struct {
			Value       json.RawMessage            `json:"value"`
			Evidence    *schema.Evidence           `json:"evidence"`
			Error       *schema.ActionFailure      `json:"error"`
			Observation *schema.SurfaceObservation `json:"observation"`
		} `json:"result"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return "INTERNAL_ERROR: the page's answer could not be read."
	}
	var b strings.Builder
	switch {
	case !r.OK && r.Error != nil:
		writeFailure(&b, r.Error.Code, r.Error.Message, nil, "")
		return b.String()
	case r.Result == nil:
		return "INTERNAL_ERROR: the page gave no result."
	case r.Result.Error != nil:
		e := r.Result.Error
		writeFailure(&b, e.Code, e.Message, e.Details, e.Resume)
	default:
		res := r.Result
		b.WriteString("OK: ")
		if e := res.Evidence; e != nil {
			b.WriteString(e.Capability)
			if e.Record != "" {
				b.WriteString(" on " + e.Record)
			}
			b.WriteString(" ran.")
			if proof := EvidenceProof(e, true); len(proof) > 0 {
				b.WriteString("\nProof: " + strings.Join(proof, "; "))
			}
		} else {
			b.WriteString("it ran.")
		}
		if v := string(res.Value); v != "" && v != "null" {
			b.WriteString("\nValue: " + cut(v, maxToolValue))
		}
	}
	if o := r.Result.Observation; o != nil {
		if len(o.States) > 0 {
			b.WriteString("\nChanged: " + strings.Join(slices.Sorted(maps.Keys(o.States)), ", "))
		}
		for _, f := range o.Feedback {
			b.WriteString("\nThe page says (" + f.Level + "): " + f.Message)
		}
		if n := o.Navigation; n != nil && n.To != "" {
			b.WriteString("\nThe page went to " + n.To)
		}
		if o.CapabilitiesChanged {
			b.WriteString("\nNext: the page's tools changed; list them again.")
		}
	}
	return b.String()
}

// writeFailure is a failure's line: code, message, the next step, then
// what helps to take it.
func writeFailure(b *strings.Builder, code, msg string, details map[string]any, resume string) {
	msg = strings.TrimSpace(msg)
	if msg != "" && !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	b.WriteString(code + ": " + msg)
	if step := mirrorStep(perr.Code(code), msg, details); step != "" {
		b.WriteString(" Next: " + step)
	}
	if len(details) > 0 {
		if d, err := json.Marshal(details); err == nil {
			b.WriteString("\nDetails: " + cut(string(d), maxToolValue))
		}
	}
	if resume != "" {
		b.WriteString("\nResume token: " + resume)
	}
}

// mirrorSteps are the next steps, for a WebMCP consumer, of the codes
// whose registry text speaks of what it does not have (describe: it lists
// tools) or of what it did not do wrong (the schema, for values the
// page's own checks refused).
var mirrorSteps = map[perr.Code]string{
	perr.ActionNotFound:       "The page has no such tool now; list its tools again.",
	perr.CapabilityNotExposed: "This tool is not offered to you now; list the page's tools again, and do not try a similar name.",
	perr.ExecutionFailed:      "The page's code stopped with this message: read it, fix what it names (often a value), then decide whether to call again.",
	perr.LoopDetected:         "Stop repeating the call; look at the page and choose a different step.",
}

// SchemaRefused is the message of the runtime's INVALID_PARAMS for
// values its schema check refuses (each violation the schema's): the
// registry's own message for the code, so the two cannot drift.
var SchemaRefused = func() string {
	e, _ := perr.Lookup(perr.InvalidParams)
	return e.Message.En
}()

// recordNotFound is the next step of an ACTION_NOT_FOUND for a folded
// tool's record: the tool is there, the id or label is not.
const recordNotFound = "No record of this kind has that id or label: pass the id or the whole label of one the page shows (Details has an example), then call again."

// mirrorStep is a failure's one next step for a WebMCP consumer, given
// its message (ending with ".") and details. An INVALID_PARAMS other than
// the schema check's (SchemaRefused) is the page's refusal of values the
// schema allowed: its form's checks or submit handler, with violations
// quoting the page's message at each field, or its server's, with or
// without a path; so it points to the page's message, not to the schema.
// An ACTION_NOT_FOUND that names a record kind is a record the page does
// not have, not a tool that went.
func mirrorStep(code perr.Code, msg string, details map[string]any) string {
	if code == perr.InvalidParams && msg != SchemaRefused+"." {
		return "The page refused these values: correct them as its message says, then call again."
	}
	if _, ok := details["kind"]; ok && code == perr.ActionNotFound {
		return recordNotFound
	}
	if s, ok := mirrorSteps[code]; ok {
		return s
	}
	if entry, ok := perr.Lookup(code); ok {
		return entry.Action.En
	}
	return ""
}

// EvidenceProof says what proves an outcome, one part each, as the texts
// for a model give it (Text here; pling mcp's results, agent/mcp):
// each expectation ("cart.count increase met", with its values before and
// after when values is set), then the approval, the handoff and the
// number of steps.
func EvidenceProof(e *schema.Evidence, values bool) []string {
	var proof []string
	for _, x := range e.Expectations {
		met := "met"
		if !x.Met {
			met = "NOT met"
		}
		p := fmt.Sprintf("%s %s %s", x.State, x.Condition, met)
		if values && x.Before != nil {
			if bv, err := json.Marshal(x.Before); err == nil {
				av, _ := json.Marshal(x.After)
				p += fmt.Sprintf(" (%s → %s)", cut(string(bv), 80), cut(string(av), 80))
			}
		}
		proof = append(proof, p)
	}
	if e.Approval != "" {
		proof = append(proof, "approval "+e.Approval)
	}
	if e.Handoff != "" {
		proof = append(proof, "handoff "+e.Handoff)
	}
	if e.Steps > 0 {
		proof = append(proof, fmt.Sprintf("%d steps", e.Steps))
	}
	return proof
}

// cut bounds s to max characters, marking the cut with an ellipsis.
func cut(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
