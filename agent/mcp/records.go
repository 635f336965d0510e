package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/pagetext"
	"github.com/pling-go/pling/schema"
)

// Records by label: a folded tool takes its record as the id the page
// gives it (ord_250) or as the label a person reads (#1250). The bridge
// maps a label to the id from what describe returns (context.records),
// asking for every record of the kind only when the label is not among
// the ones it already has; and it says, in the tool's description, which
// rows the tool refuses and what it does about them.

// maxLookup is the most records one label lookup asks describe for
// (describe's own bound, options.maxRecords).
const maxLookup = 10000

// recordParam is the description of a folded tool's record property.
func recordParam(d *schema.SurfaceDescription, c schema.SurfaceCapability) string {
	// How ids and labels are matched (whole label or its first word) is
	// said once, in the server instructions.
	id, label := exampleRecord(d, c)
	switch {
	case id == "":
		return fmt.Sprintf("The %s's id or label (%d in all)", c.Record.Kind, c.Record.Total)
	case label == "" || label == id:
		return fmt.Sprintf("The %s's id or label, e.g. %q (%d in all)", c.Record.Kind, id, c.Record.Total)
	}
	return fmt.Sprintf("The %s's id or label, e.g. %q or %q (%d in all)", c.Record.Kind, id, label, c.Record.Total)
}

// exampleRecord is a record of the capability's kind that the example
// identifies alone: its id and a label that names it and no other listed
// record — the label's first word when no other record's label starts
// with it ("#1001"; the first word is what stays when a status in the
// label changes), else the whole label. A label shared by many rows, like
// "Task", would name none of them: then only the id is given.
func exampleRecord(d *schema.SurfaceDescription, c schema.SurfaceCapability) (id, label string) {
	if set, ok := d.Context.Records[c.Record.Kind]; ok && len(set.Items) > 0 {
		words := make(map[string]int, len(set.Items))
		labels := make(map[string]int, len(set.Items))
		for _, it := range set.Items {
			words[firstWord(it.Label)]++
			labels[it.Label]++
		}
		for _, it := range set.Items {
			switch w := firstWord(it.Label); {
			case w != "" && words[w] == 1:
				return it.ID, w
			case it.Label != "" && labels[it.Label] == 1:
				return it.ID, it.Label
			}
		}
		return set.Items[0].ID, ""
	}
	if len(c.Record.Visible) > 0 {
		return c.Record.Visible[0], ""
	}
	return "", ""
}

// example is an id and label as a model reads them: "t1" or "Printer jams".
func example(id, label string) string {
	if label == "" || label == id {
		return fmt.Sprintf("%q", id)
	}
	return fmt.Sprintf("%q or %q", id, label)
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// recordRule says which records a folded tool acts on, and what happens
// to one out of view.
func recordRule(d *schema.SurfaceDescription, c schema.SurfaceCapability, names map[string]string) string {
	kind := c.Record.Kind
	if c.Record.AllowOffscreen {
		return fmt.Sprintf("Any %s, in view or not.", kind)
	}
	if rv := revealer(d, kind, c.ID); rv != nil {
		return fmt.Sprintf("Out of view, it first runs %s to bring the %s into view.", names[rv.ID], kind)
	}
	return fmt.Sprintf("Only %ss in view (else ACTION_UNAVAILABLE: scroll or filter the page first).", kind)
}

// revealer is a read-only capability of the same kind that runs on
// offscreen records — one that brings a record into view, like
// open@order — if the page declares one.
func revealer(d *schema.SurfaceDescription, kind, not string) *schema.SurfaceCapability {
	if d == nil {
		return nil
	}
	for i, c := range d.Capabilities {
		if c.ID != not && c.Record != nil && c.Record.Kind == kind && c.Record.AllowOffscreen && c.Risk == schema.RiskRead {
			return &d.Capabilities[i]
		}
	}
	return nil
}

func capabilityOf(d *schema.SurfaceDescription, id string) *schema.SurfaceCapability {
	if d == nil {
		return nil
	}
	for i := range d.Capabilities {
		if d.Capabilities[i].ID == id {
			return &d.Capabilities[i]
		}
	}
	return nil
}

// lookup finds the record rec names in d: by id, by whole label, or by the
// label's first word, in any case. More than one match is ambiguous: all
// are returned.
func lookup(d *schema.SurfaceDescription, kind, rec string) []schema.RecordItem {
	set := d.Context.Records[kind]
	for _, it := range set.Items {
		if it.ID == rec {
			return []schema.RecordItem{it}
		}
	}
	// As the runtime resolves it (runtime/recordlabel.go): each form as
	// written, then in any case.
	var out []schema.RecordItem
	for _, match := range []func(label string) bool{
		func(l string) bool { return l == rec },
		func(l string) bool { return strings.EqualFold(l, rec) },
		func(l string) bool { return firstWord(l) == rec },
		func(l string) bool { return strings.EqualFold(firstWord(l), rec) },
	} {
		for _, it := range set.Items {
			if it.Label != "" && match(it.Label) {
				out = append(out, it)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return out
}

// resolveRecord rewrites a folded call's input.record from a label to its
// id and brings an offscreen record into view when the tool's rule says it
// does; note says what it did, for the result. A result is a failure the
// call ends with, before anything ran.
//
// What the last describe listed is enough for most calls. A record it
// did not list (or listed out of view) needs a describe of every record
// of the page, which on a page of thousands of rows costs more than the
// call: without describe, resolveRecord leaves the call as it is and
// says so (deferred), and the handler sends it at once, since the page
// resolves ids and labels itself; only when the page refuses the record
// (not found, out of view, a label of several rows) is resolveRecord
// asked again with describe. revealed says it brought the record into
// view, so the call is worth sending again.
func (b *Bridge) resolveRecord(ctx context.Context, capability string, input map[string]any, note *string, describe bool) (failed *sdk.CallToolResult, revealed, deferred bool) {
	b.mu.Lock()
	d := b.desc
	b.mu.Unlock()
	c := capabilityOf(d, capability)
	rec, ok := input["record"].(string)
	if c == nil || c.Record == nil || !ok || rec == "" || slices.Contains(c.Record.Visible, rec) {
		return nil, false, false // the executor judges the rest
	}
	kind := c.Record.Kind
	full := d
	found := lookup(d, kind, rec)
	if len(found) == 0 || (found[0].Offscreen && !c.Record.AllowOffscreen) {
		if !describe {
			return nil, false, true
		}
		// The bounded describe did not list it (or we need to act on it):
		// ask for every record of the page.
		max := maxLookup
		var err error
		if full, err = b.client.Describe(ctx, &schema.DescribeOptions{MaxRecords: &max}); err != nil {
			return nil, false, false // the invoke says what is wrong
		}
		found = lookup(full, kind, rec)
	}
	fail := func(code perr.Code, msg, next string) *sdk.CallToolResult {
		r := businessResult(&agent.BusinessError{Code: code, Message: msg, Capability: capability})
		r.Content = []sdk.Content{&sdk.TextContent{Text: string(code) + ": " + msg + " Next: " + next}}
		return r
	}
	switch {
	case len(found) == 0:
		// The page is the authority on what exists: the invoke goes as
		// asked (ACTION_NOT_FOUND, with the observation), and the result
		// says what ids and labels look like.
		*note = fmt.Sprintf("No %s has the id or label %q.", kind, rec)
		if id, label := exampleRecord(full, *c); id != "" {
			*note = fmt.Sprintf("No %s has the id or label %q. Next: pass the id or the whole label of a %s listed by browser.page, e.g. %s.", kind, rec, kind, example(id, label))
		}
		return nil, false, false
	case len(found) > 1:
		var labels []string
		for _, it := range found[:min(len(found), 5)] {
			labels = append(labels, fmt.Sprintf("%s (%s)", pagetext.Quote(it.ID), pagetext.Quote(it.Label)))
		}
		return fail(perr.InvalidArgs, fmt.Sprintf("%d %ss match %q: %s.", len(found), kind, rec, strings.Join(labels, "; ")),
			"pass the id of the one you mean."), false, false
	}
	it := found[0]
	input["record"] = it.ID
	if it.ID != rec {
		*note = fmt.Sprintf("%s is %s", rec, it.ID)
	}
	if !it.Offscreen || c.Record.AllowOffscreen {
		return nil, false, false
	}
	rv := revealer(full, kind, capability)
	if rv == nil {
		return fail(perr.ActionUnavailable, fmt.Sprintf("%s %s is not in view, and %s acts only on %ss in view.", kind, rec, capability, kind),
			"bring it into view first (scroll or filter the page), then call this tool again."), false, false
	}
	if _, err := b.client.Invoke(ctx, rv.ID, map[string]any{"record": it.ID}); err != nil {
		return fail(perr.ActionUnavailable, fmt.Sprintf("%s %s is not in view, and bringing it into view with %s failed: %v.", kind, rec, rv.ID, err),
			"bring it into view yourself, then call this tool again."), false, false
	}
	if *note != "" {
		*note += "; "
	}
	*note += "brought into view with " + rv.ID + " first"
	return nil, true, false
}

// recordRefused reports whether the page refused a folded call for its
// record, before anything ran: not found, out of view (or otherwise
// unavailable), or a label several rows have.
func recordRefused(err error) bool {
	var be *agent.BusinessError
	if !errors.As(err, &be) {
		return false
	}
	switch be.Code {
	case perr.ActionNotFound, perr.ActionUnavailable, perr.InvalidParams:
		return true
	}
	return false
}
