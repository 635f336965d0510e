package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/internal/pagetext"
	"github.com/pling-go/pling/schema"
)

func init() {
	register(command{"describe", "describe what a page lets an agent do", runDescribe})
}

func runDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out, errs := newTerminal(stdout), newTerminal(stderr)
	defer out.Flush()
	defer errs.Flush()
	stdout, stderr = out, errs
	fl := newFlags("describe", stderr,
		"Usage: pling describe TARGET [--session TOKEN | --session-file PATH | --token-file PATH] [--json] [--max-records N] [--strict]",
		"       pling describe --session-name NAME [URL] …  (the tab of pling session start)",
		"Describes the capabilities a page exposes to the session, and its context (docs/protocol.md §3.4);",
		"for a page in a browser, also where each markup declaration sits, with a warning on stderr for",
		"each in user content, set aside, in conflict, refused, or that looks like users' content.",
		targetHelp,
		sessionHelp,
		"Exit status: 0 described, 1 the page refused or failed (with --strict: or exposes no capability), 2 usage.",
	)
	pc := addPageFlags(fl, stderr)
	asJSON := fl.Bool("json", false, "print the description (or the failure) as JSON, for programs")
	maxRecords := fl.Int("max-records", -1, "list at most this many record ids per kind (-1: the page's bound)")
	strict := fl.Bool("strict", false, "exit 1 when the page exposes no capability to the session (for CI)")
	pos, exit, ok := pc.parse(args, 1, "one TARGET")
	if !ok {
		return exit
	}
	if *maxRecords < -1 || *maxRecords > 10000 {
		fmt.Fprintf(stderr, "pling describe: --max-records must be -1…10000, not %d\n", *maxRecords)
		return 2
	}
	t, tr, sess, exit, ok := pc.open(ctx, pos[0])
	if !ok {
		return exit
	}
	defer closeTransport(t)

	var opts *schema.DescribeOptions
	if *maxRecords >= 0 {
		opts = &schema.DescribeOptions{MaxRecords: maxRecords}
	}
	d, err := agent.New(tr, agent.WithSession(sess)).Describe(ctx, opts)
	if err != nil {
		if *asJSON {
			writeIndentedJSON(stdout, map[string]any{"error": failureJSON(err)})
		} else {
			printFailure(stderr, "describe", err)
		}
		if p, ok := t.(*cdp.Page); ok { // a page that threw may be why
			for _, m := range thrownLines(p) {
				fmt.Fprintf(stderr, "pling describe: %s\n", problemLine(m))
			}
		}
		return 1
	}
	if *asJSON {
		writeIndentedJSON(stdout, d)
	} else {
		printDescription(stdout, d)
	}
	printPageProblems(ctx, stderr, t, pos[0])
	if p, ok := t.(*cdp.Page); ok { // the module has started for pling.check()
		var w io.Writer
		if !*asJSON {
			w = stdout
		}
		printMarkup(w, stderr, readPlaces(ctx, p), pos[0])
	}
	if len(d.Capabilities) == 0 {
		printNothingExposed(stderr, d)
		if *strict {
			return 1
		}
	}
	return 0
}

// printNothingExposed says why a description lists no capability: the
// page's own line on what its site allowlist hides (declared N, exposed
// none, the patterns: pagebridge.WithUnexposedFeedback), what is declared but
// unavailable now, or else where to look.
func printNothingExposed(w io.Writer, d *schema.SurfaceDescription) {
	fmt.Fprintln(w, "pling describe: the page exposes 0 capabilities to this session.")
	said := false
	for _, f := range d.Context.Feedback {
		if strings.Contains(f.Message, "not exposed by the site allowlist") {
			fmt.Fprintf(w, "  why: %s\n", ln(f.Message, 2000))
			fmt.Fprintln(w, "  fix: widen data-expose on the pling.js tag (or configure({expose})), e.g. data-expose=\"*\"")
			said = true
		}
	}
	if n := len(d.Context.Unavailable); n > 0 {
		fmt.Fprintf(w, "  why: %d declared capability(ies) are unavailable now (listed under Unavailable)\n", n)
		said = true
	}
	if !said {
		fmt.Fprintln(w, "  why: the page declares no action this session's scope reaches: none declared (pling.action, data-pling-action),")
		fmt.Fprintln(w, "       or the session's scope / the anonymous allowlist (data-anonymous) leaves none")
	}
}

// writeIndentedJSON prints v as indented JSON without HTML escaping.
func writeIndentedJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// ln is a string the page wrote as describe prints it: on one line, every
// character a terminal acts on escaped, cut to max characters
// (pagetext.Line).
func ln(s string, max int) string { return pagetext.Line(s, max) }

// printDescription renders a description for people: the page, the
// capabilities with their inputs, then the context.
func printDescription(w io.Writer, d *schema.SurfaceDescription) {
	cx := d.Context
	if p := cx.Page; p != nil && (p.Title != "" || p.URL != "") {
		fmt.Fprintln(w, strings.TrimSpace(ln(p.Title, 200)+"  "+ln(p.URL, 500)))
	}
	fmt.Fprintf(w, "revision %s\n", ln(d.Revision, 100))

	fmt.Fprintf(w, "\nCapabilities (%d)\n", len(d.Capabilities))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range d.Capabilities {
		var flags []string
		if c.Approval {
			flags = append(flags, "needs approval")
		}
		if c.Handoff {
			flags = append(flags, "hands off to a person")
		}
		if c.Steps > 0 {
			flags = append(flags, fmt.Sprintf("%d steps", c.Steps))
		}
		title := ln(c.Title, 200)
		if len(flags) > 0 {
			title += " (" + strings.Join(flags, ", ") + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", ln(c.ID, 200), ln(string(c.Risk), 20), title)
		if c.Description != "" {
			fmt.Fprintf(tw, "  \t\t%s\n", ln(c.Description, 2000))
		}
		if r := c.Record; r != nil {
			fmt.Fprintf(tw, "  \t\trecord: %s\n", ln(recordLine(r), 2000))
		}
		if in := inputLine(c.InputSchema); in != "" {
			fmt.Fprintf(tw, "  \t\tinput: %s\n", ln(in, 2000))
		}
	}
	tw.Flush()

	if len(cx.Unavailable) > 0 {
		fmt.Fprintln(w, "\nUnavailable")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, u := range cx.Unavailable {
			why := u.Reason
			if u.Code != "" {
				why = strings.TrimSpace(u.Code + " " + why)
			}
			fmt.Fprintf(tw, "  %s\t%s\n", ln(u.ID, 200), ln(why, 2000))
		}
		tw.Flush()
	}
	if len(cx.States) > 0 {
		fmt.Fprintln(w, "\nStates")
		for _, k := range keysSorted(cx.States) {
			b, _ := schema.Encode(cx.States[k])
			fmt.Fprintf(w, "  %s = %s\n", ln(k, 200), ln(string(b), 1000))
		}
	}
	if len(cx.Records) > 0 {
		fmt.Fprintln(w, "\nRecords")
		for _, k := range keysSorted(cx.Records) {
			rs := cx.Records[k]
			var items []string
			for _, it := range rs.Items {
				s := ln(it.ID, 200)
				if it.Label != "" {
					s += " " + pagetext.Quote(pagetext.Line(it.Label, 200))
				}
				if it.Offscreen {
					s += " (offscreen)"
				}
				items = append(items, s)
			}
			more := ""
			if rs.Truncated {
				more = ", …"
			}
			fmt.Fprintf(w, "  %s: %d total: %s%s\n", ln(k, 200), rs.Total, strings.Join(items, ", "), more)
		}
	}
	if len(cx.Regions) > 0 {
		fmt.Fprintln(w, "\nRegions")
		for _, r := range cx.Regions {
			state := "inactive"
			if r.Active {
				state = "active"
			}
			if r.Modal {
				state += ", modal"
			}
			fmt.Fprintf(w, "  %s %s (%s)\n", ln(r.ID, 200), ln(r.Title, 200), state)
		}
	}
	if len(cx.Feedback) > 0 {
		fmt.Fprintln(w, "\nFeedback")
		for _, f := range cx.Feedback {
			fmt.Fprintf(w, "  %s: %s\n", ln(f.Level, 20), ln(f.Message, 2000))
		}
	}
	if len(cx.Guides) > 0 {
		fmt.Fprintln(w, "\nGuides")
		for _, g := range cx.Guides {
			fmt.Fprintf(w, "  %s %s\n", ln(g.Target, 500), ln(g.Label, 200))
		}
	}
	if t := d.Truncated; t != nil {
		fmt.Fprintf(w, "\nTruncated by: %s", strings.Join(t.Reasons, ", "))
		if t.OmittedCapabilities > 0 {
			fmt.Fprintf(w, " (%d capabilities omitted)", t.OmittedCapabilities)
		}
		fmt.Fprintln(w)
	}
}

func recordLine(r *schema.RecordTemplate) string {
	s := fmt.Sprintf("%s, %d total; pass input.record", r.Kind, r.Total)
	if len(r.Visible) > 0 {
		more := ""
		if r.Truncated {
			more = ", …"
		}
		s += "; visible " + strings.Join(r.Visible, ", ") + more
	}
	if r.Offscreen > 0 {
		s += fmt.Sprintf("; %d offscreen", r.Offscreen)
		if r.AllowOffscreen {
			s += " (allowed)"
		}
	}
	if n := r.RowsAvailable(); n != "" {
		s += "; " + n
	}
	return s
}

func inputLine(s schema.JSONSchema) string {
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	var parts []string
	for _, k := range keysSorted(s.Properties) {
		p := s.Properties[k]
		part := k
		if p != nil && p.Type != "" {
			part += " " + p.Type
		}
		if required[k] {
			part += " (required)"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

func keysSorted[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printMarkup prints, on w (the description; nil: not printed), where
// each of the page's markup declarations sits, and warns on warn about
// each one inside the site's user-content mark, set aside by a script
// declaration, in conflict, refused, or whose place looks like the site's
// users wrote it.
func printMarkup(w, warn io.Writer, pp pagePlaces, url string) {
	ps := pp.places
	if len(ps) == 0 {
		return
	}
	if w != nil {
		fmt.Fprintf(w, "\nMarkup (%d declarations, where each sits)\n", len(ps))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, p := range ps {
			status := ln(p.Status, 20)
			if p.UserContent {
				status += ", in user content"
			} else if p.Suspect != "" {
				status += ", looks like users' content"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", ln(p.Kind, 20), ln(p.Key, 200), ln(p.Path, 200), status)
		}
		tw.Flush()
	}
	warned := 0
	for _, p := range ps {
		var why string
		switch p.Status {
		case pagebridge.PlaceSetAside:
			why = "the site's script declares the same " + pagebridge.KeyWord(p.Kind) + ", so it is set aside"
		case pagebridge.PlaceConflict:
			why = "another, different declaration holds the same " + pagebridge.KeyWord(p.Kind) + ", so neither is available"
		case pagebridge.PlaceRefused:
			why = "it was refused"
		default:
			why = "it declares as the site"
		}
		switch {
		case p.UserContent:
			why = "it sits inside user content (data-pling-user-content), where markup declares nothing; " + why
		case p.Suspect != "":
			why = "it looks like content the site's users wrote (" + p.Suspect + "); " + why
		case p.Status == pagebridge.PlaceDeclared:
			continue
		}
		fmt.Fprintf(warn, "pling describe: warning: %s %s (markup at %s): %s\n", ln(p.Kind, 20), pagetext.Quote(pagetext.Line(p.Key, 200)), ln(p.Path, 200), ln(why, 1000))
		warned++
	}
	if warned > 0 {
		fmt.Fprintf(warn, "pling describe: pling check %s says how to fix each\n", url)
	}
}
