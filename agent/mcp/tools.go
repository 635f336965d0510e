package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/pagetext"
	"github.com/pling-go/pling/schema"
)

// Tool is one capability as an MCP tool.
type Tool struct {
	Tool       *sdk.Tool
	Capability string
	// handler, when set, answers instead of an invoke of Capability: a
	// page's own WebMCP tool (webmcp.go).
	handler sdk.ToolHandler

	placeholder bool // listed while unavailable (unavailableTools)
	openSchema  bool // … with an open input schema (placeholderSchema)
}

// MetaUntrusted is the _meta key of a tool whose output carries the page's
// data, which its users may have written (a read): WebMCP's
// untrustedContentHint, which MCP's annotations lack.
const MetaUntrusted = "pling/untrustedContentHint"

// Tools renders a description's capabilities as MCP tools, in capability
// order, named and shaped as modeltool.List renders them in the page.
func Tools(d *schema.SurfaceDescription) ([]Tool, error) {
	out := make([]Tool, 0, len(d.Capabilities))
	ids := make([]string, len(d.Capabilities))
	for i, c := range d.Capabilities {
		ids[i] = c.ID
	}
	names := modeltool.Names(ids)
	byID := make(map[string]string, len(ids))
	for i, id := range ids {
		byID[id] = names[i]
	}
	for i, c := range d.Capabilities {
		name := names[i]
		c.Title = saidTitle(c.ID, c.Title, c.Description)
		desc := capabilityText(c.Title, c.Description)
		params := toolSchema(c.InputSchema, nil)
		if c.Record != nil {
			params = toolSchema(c.InputSchema, &schema.PropertySchema{Type: "string", Description: recordParam(d, c)})
			if !strings.HasSuffix(desc, ".") {
				desc += "."
			}
			desc += " " + recordRule(d, c, byID)
		}
		desc = withPerson(desc, c)
		in, err := schema.Encode(params)
		if err != nil {
			return nil, fmt.Errorf("pling mcp: input schema of %s: %w", c.ID, err)
		}
		ann, meta := riskHints(c.Risk)
		out = append(out, Tool{Capability: c.ID, Tool: &sdk.Tool{
			Meta:        meta,
			Name:        name,
			Title:       toolTitle(c.Title, desc),
			Description: desc,
			InputSchema: json.RawMessage(in),
			Annotations: ann,
		}})
	}
	return out, nil
}

// riskHints are a tool's annotations for its risk. MCP reads a missing
// destructiveHint as true, so a write that is not destructive says false,
// and a read-only tool (where the hint means nothing) says nothing.
func riskHints(risk schema.Risk) (*sdk.ToolAnnotations, sdk.Meta) {
	ann := &sdk.ToolAnnotations{ReadOnlyHint: risk == schema.RiskRead}
	if !ann.ReadOnlyHint {
		destructive := risk == schema.RiskDestructive
		ann.DestructiveHint = &destructive
		return ann, nil
	}
	// A read's output is the page's data, which its users may have
	// written: MCP has no untrusted-content hint, so the nearest it has
	// (openWorldHint: the tool reaches entities outside the client's
	// closed world) and WebMCP's own hint under the bridge's _meta prefix
	// (RATIONALE.md).
	open := true
	ann.OpenWorldHint = &open
	return ann, sdk.Meta{MetaUntrusted: true}
}

// toolTitle is a tool's title for a client's display (MCP Tool.title),
// unless the description begins with it, as it does when the page wrote
// one: the model reads it there and a client shows the name.
func toolTitle(title, desc string) string {
	title, _ = cutText(title, MaxTitleLen)
	if titleSaid(title, desc) {
		return ""
	}
	return pagetext.Escape(title)
}

// toolSchema is a capability's input schema as its tool lists it: an
// object, with a required "record" parameter first for a row action, and
// without "additionalProperties": false, written on every tool: the page
// checks the arguments against its own schema and answers an unknown one
// with INVALID_PARAMS, which the model reads.
func toolSchema(in schema.JSONSchema, record *schema.PropertySchema) schema.JSONSchema {
	in.Type = "object"
	in.AdditionalProperties = nil
	if record != nil {
		props := make(map[string]*schema.PropertySchema, len(in.Properties)+1)
		for k, v := range in.Properties {
			props[k] = v
		}
		props["record"] = record
		in.Properties = props
		in.Required = append([]string{"record"}, in.Required...)
	}
	return in
}

// parametersOf is " (DESCRIPTION Parameters: {…})" for a capability
// whose listed tool is a placeholder: the list does not change when it
// becomes available, so the result gives what the list would not — its
// description, unless the placeholder was listed with the page's words
// already, and its parameters unless the placeholder has them.
func parametersOf(specs []Tool, id string, listed toolEntry) string {
	if !listed.placeholder {
		return ""
	}
	for _, t := range specs {
		if t.Capability != id {
			continue
		}
		var parts []string
		if listed.tool == nil || !strings.HasPrefix(listed.tool.Description, "From the page: ") {
			parts = append(parts, t.Tool.Description)
		}
		if listed.openSchema {
			parts = append(parts, "Parameters: "+string(t.Tool.InputSchema.(json.RawMessage)))
		}
		if len(parts) == 0 {
			return ""
		}
		return " (" + strings.Join(parts, " ") + ")"
	}
	return ""
}

// withPerson says, in a tool's description, that a call waits for a
// person: the page asks them to approve it, or hands the work over to
// them. Such a call takes minutes, not milliseconds, and may end with
// their refusal.
func withPerson(desc string, c schema.SurfaceCapability) string {
	var s string
	switch {
	case c.Approval && c.Handoff:
		s = "A person approves each call in the browser, then finishes it there: it waits for them (minutes)."
	case c.Approval:
		s = "A person approves each call in the browser: it waits for them (minutes), and fails if they refuse."
	case c.Handoff:
		s = "A person finishes it in the browser: it waits for them (minutes)."
	default:
		return desc
	}
	if desc != "" && !strings.HasSuffix(desc, ".") {
		desc += "."
	}
	return strings.TrimSpace(desc + " " + s)
}
