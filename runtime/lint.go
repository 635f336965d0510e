package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pling-go/pling/internal/pagebridge"
)

// availabilityCheckFailed is the reason of an availability check that
// threw (or panicked): the page bridge and checkAvailable both give it,
// and lint reports it to the page's author.
const availabilityCheckFailed = "The availability check failed"

// saying quotes the page's text of a failure in a lint line.
func saying(text string) string {
	if text == "" {
		return ""
	}
	return " (the page says: " + text + ")"
}

// maxLint bounds the lines lint returns.
const maxLint = 100

// lint lists, for the page's author, the mistakes in what is declared now
// that no single declaration shows: an expectation on a state nobody
// declares (it can never be met), an availability check that throws, a
// records or state reader that fails, a site allowlist that exposes
// nothing while actions are declared. Each
// line names the declaration and says how to fix it. It asks the page's
// availability checks, so the page bridge runs it on development origins
// and for pling check only (docs/page-api.md §2.10).
func (rt *Runtime) lint(ctx context.Context) []string {
	snap := rt.snapshot()
	states := map[string]bool{}
	for _, s := range snap.states {
		states[s.Key] = true
	}
	for _, k := range snap.stateConflicts {
		states[k] = true
	}
	rows := newRowReader(snap, 0)
	var out []string
	add := func(format string, args ...any) {
		if len(out) < maxLint {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	expect := func(id, where string, e *Expectation) {
		if e != nil && e.State != "" && !states[e.State] {
			add("pling: action %q: %s names the state %q, which is not declared, so the expectation can never be met; declare it (pling.state(%q, read) or data-pling-state=%q) or fix the name", id, where, e.State, e.State, e.State)
		}
	}
	check := func(id string, a *Action) {
		expect(id, "expect.state", a.Expect)
		for i := range a.Steps {
			expect(id, fmt.Sprintf("steps[%d].expect.state", i), a.Steps[i].Expect)
		}
	}
	for _, sa := range snap.setAside {
		add("pling: %s %q%s: the site's script declares the same %s, so this markup declaration is ignored; if it sits in content the site's users wrote, mark that content data-pling-user-content (docs/markup.md), else give it its own %s", sa.kind, sa.key, markupWhere(sa.markup), pagebridge.KeyWord(sa.kind), pagebridge.KeyWord(sa.kind))
	}
	for _, c := range snap.caps {
		if c.conflict {
			add("pling: DUPLICATE_ACTION_ID: two different actions are declared under the id %q (%s), so neither is available; give each its own id, or make them identical; one in content the site's users wrote is theirs, not the site's: mark that content data-pling-user-content (docs/markup.md)", c.id, strings.Join(c.places, "; "))
			continue
		}
		if len(rt.cfg.gate.expose) > 0 && !MatchAny(rt.cfg.gate.expose, c.id) {
			add("pling: action %q is declared but the site allowlist (%s) does not expose it, so agents cannot see it; widen data-expose (or configure({expose})) if they should", c.id, patternsText(rt.cfg.gate.expose))
		}
		if c.fold == nil {
			check(c.id, &c.action)
			if av := checkAvailable(ctx, &c.action, ""); !av.OK {
				if text, ok := checkFailedText(av.Reason); ok {
					add("pling: action %q: its availability check throws%s, so it is unavailable; make available return true, false or a reason", c.id, saying(text))
				}
			}
			continue
		}
		if c.fold.hasTemplate {
			check(c.id, &c.fold.template)
		}
		for _, rec := range slices.Sorted(maps.Keys(c.fold.rows)) {
			a := c.fold.rows[rec]
			check(c.id, &a)
		}
		if _, err := rows.read(ctx, c.fold.kind); err != nil {
			continue // named once, with the records below
		}
		if av, _ := rt.capAvailable(ctx, rows, c, false); !av.OK {
			if text, ok := checkFailedText(av.Reason); ok {
				add("pling: action %q: its availability check throws for every known row%s, so it is unavailable; make available(record) return true, false or a reason for each record id", c.id, saying(text))
			}
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(snap.records)) {
		if _, err := rows.read(ctx, kind); err != nil {
			add("pling: records %q: the reader failed (the page says: %s), so its rows are not listed and its row actions are unavailable; make it return [{id, label, visible}] by exactly those names", kind, pageSays(err))
		}
	}
	for _, s := range snap.states {
		if _, err := readState(ctx, s); err != nil {
			add("pling: state %q: the reader failed (the page says: %s), so it reads null; make read() return the state's JSON value", s.Key, pageSays(err))
		}
	}
	if len(rt.cfg.gate.expose) == 0 && len(snap.caps) > 0 {
		add("pling: %d action(s) are declared but the site allowlist is empty, so agents see none; add data-expose=\"*\" (or patterns) to the pling.js tag, or configure({expose: [...]})", len(snap.caps))
	}
	return out
}
