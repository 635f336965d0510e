package mcp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/pagetext"
	"github.com/pling-go/pling/schema"
)

// unavailableTools keeps the capabilities that cannot run now in the tool
// list (docs/agent.md §4.3): one the bridge listed before keeps its tool
// as it was, so a step that only changes what is available costs no new
// list (and no tools/list_changed); one never seen available gets a tool
// that says so, with the page's reason. A call to either is an invoke,
// which the page answers with ACTION_UNAVAILABLE and its reason — not a
// JSON-RPC "unknown tool", which would tell a model the site cannot do it.
func (b *Bridge) unavailableTools(d *schema.SurfaceDescription, listed []Tool) []Tool {
	names := make(map[string]bool, len(listed))
	for _, t := range listed {
		names[t.Tool.Name] = true
	}
	var out []Tool
	for _, u := range d.Context.Unavailable {
		if !listedUnavailable(u) || capabilityOf(d, u.ID) != nil {
			continue // a state's or guide's mistake, not a capability
		}
		name := modeltool.Names([]string{u.ID})[0]
		if names[name] {
			continue
		}
		names[name] = true
		if old, ok := b.tools[name]; ok && old.capability == u.ID && old.tool != nil {
			out = append(out, Tool{Capability: u.ID, Tool: old.tool, placeholder: old.placeholder, openSchema: old.openSchema})
			continue
		}
		in, open := placeholderSchema(u)
		// A result says when it becomes available ("Now available"), so
		// the description need not; one listed without its schema says
		// where its parameters come.
		desc := "Unavailable when listed (" + unavailableReason(u) + ")."
		if open {
			desc += " A result gives its parameters when it can run."
		}
		tool := &sdk.Tool{Name: name, InputSchema: in}
		if u.Title != "" {
			// Listed as it would be when available: its words first,
			// then why it cannot run now, its hints and who is asked.
			c := schema.SurfaceCapability{Title: saidTitle(u.ID, u.Title, u.Description), Description: u.Description, Risk: u.Risk, Approval: u.Approval, Handoff: u.Handoff}
			first := capabilityText(c.Title, c.Description)
			if !strings.HasSuffix(first, ".") {
				first += "."
			}
			desc = withPerson(first+" "+desc, c)
			tool.Title = toolTitle(c.Title, desc)
			tool.Annotations, tool.Meta = riskHints(c.Risk)
		}
		tool.Description = desc
		out = append(out, Tool{Capability: u.ID, placeholder: true, openSchema: open, Tool: tool})
	}
	return out
}

// reasonText says why a capability cannot run: the page's reason,
// bounded and quoted as the page's.
func reasonText(reason string) string {
	if reason == "" {
		return "not available now; the page gave no reason"
	}
	r, _ := cutText(strings.TrimSuffix(reason, "."), MaxDescriptionLen)
	return "the page's reason: " + pagetext.Quote(r)
}

// placeholderSchema is the input schema of a capability listed while it
// cannot run: its own, as the page described it (with the "record"
// parameter of a row action, "base@kind"), else an open object (open).
func placeholderSchema(u schema.Unavailable) (in json.RawMessage, open bool) {
	if u.InputSchema == nil {
		return json.RawMessage(`{"type":"object"}`), true
	}
	var record *schema.PropertySchema
	if _, kind, ok := strings.Cut(u.ID, "@"); ok {
		record = &schema.PropertySchema{Type: "string", Description: fmt.Sprintf("The %s's id or label", kind)}
	}
	b, err := schema.Encode(toolSchema(*u.InputSchema, record))
	if err != nil {
		return json.RawMessage(`{"type":"object"}`), true
	}
	return b, false
}

// unavailableNow is what the page said cannot run, by capability id, with
// its reason, as of the last describe.
func (b *Bridge) unavailableNow() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]string{}
	if b.desc == nil {
		return out
	}
	for _, u := range b.desc.Context.Unavailable {
		if listedUnavailable(u) {
			out[u.ID] = unavailableReason(u)
		}
	}
	return out
}

// listedUnavailable reports whether u is a capability that cannot run
// now, which the tool list and browser.page keep with its reason: one
// that waits (no code), or two declarations in conflict under its id
// (DUPLICATE_ACTION_ID), so that a capability never vanishes silently.
func listedUnavailable(u schema.Unavailable) bool {
	return u.Code == "" || u.Code == string(perr.DuplicateActionID)
}

// unavailableReason says why u cannot run: the page's reason, quoted as
// the page's (reasonText), or, for a capability the runtime holds back
// with a code (two declarations under one id), the runtime's own reason
// and its code.
func unavailableReason(u schema.Unavailable) string {
	if u.Code == "" {
		return reasonText(u.Reason)
	}
	return strings.TrimSuffix(stdcmpOr(u.Reason, "Not available now"), ".") + " (" + u.Code + ")"
}

// availabilityText says which tools became available or unavailable
// between before and after (each by capability id), for a result's text:
// the list itself stays as it was.
func (b *Bridge) availabilityText(before, after map[string]string) string {
	var gone, back []string
	for id, reason := range after {
		if _, ok := before[id]; !ok {
			gone = append(gone, id+" ("+reason+")")
		}
	}
	b.mu.Lock()
	listed := b.desc
	placeholders := map[string]toolEntry{}
	for _, e := range b.tools {
		if e.placeholder {
			placeholders[e.capability] = e
		}
	}
	b.mu.Unlock()
	var specs []Tool
	if listed != nil {
		specs, _ = Tools(listed)
	}
	for id := range before {
		if _, ok := after[id]; !ok && capabilityOf(listed, id) != nil {
			back = append(back, id+parametersOf(specs, id, placeholders[id]))
		}
	}
	sort.Strings(gone)
	sort.Strings(back)
	var t strings.Builder
	if len(gone) > 0 {
		t.WriteString("\nNow unavailable: " + strings.Join(gone, "; "))
	}
	if len(back) > 0 {
		t.WriteString("\nNow available: " + strings.Join(back, "; "))
	}
	return t.String()
}
