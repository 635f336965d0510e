package runtime

import (
	"fmt"
	"strings"

	perr "github.com/pling-go/pling/errors"
)

// Records by label: a folded invoke's input.record is the record's id
// (ord_250) or the label a person reads (#1250, "T-0847 Printer jams"),
// whole or its first word. The runtime resolves it, so every consumer —
// pling mcp, a WebMCP agent, the Go client — may name a row as people
// do. An id always wins over a label; a label that fits several rows is
// refused with the candidates, never guessed.

// maxLabelMatches is how many candidates an ambiguous label lists.
const maxLabelMatches = 5

// recordByIDOrLabel finds the row rec names among rows: by id, else by
// whole label, else by the label's first word (a label in any case).
func recordByIDOrLabel(rows []RecordItem, kind, rec string) (*RecordItem, *failure) {
	for i := range rows {
		if rows[i].ID == rec {
			return &rows[i], nil
		}
	}
	// Whole label, then its first word; each as written, then in any
	// case ("lemon risotto" for "Lemon risotto"): a person does not
	// mind the case, and an exact match still wins over a folded one.
	var found []int
	for _, match := range []func(label string) bool{
		func(l string) bool { return l == rec },
		func(l string) bool { return strings.EqualFold(l, rec) },
		func(l string) bool { f := strings.Fields(l); return len(f) > 0 && f[0] == rec },
		func(l string) bool { f := strings.Fields(l); return len(f) > 0 && strings.EqualFold(f[0], rec) },
	} {
		for i := range rows {
			if match(rows[i].Label) {
				found = append(found, i)
			}
		}
		if len(found) > 0 {
			break
		}
	}
	switch len(found) {
	case 1:
		return &rows[found[0]], nil
	case 0:
		details := map[string]any{"kind": kind}
		if len(rows) > 0 {
			// What ids and labels look like, so the next call can name one.
			details["example"] = map[string]any{"id": rows[0].ID, "label": cut(rows[0].Label, 200)}
		}
		return nil, fail(perr.ActionNotFound, "No such record for this action (by id or label)", details)
	}
	matches := make([]map[string]any, 0, maxLabelMatches)
	for _, i := range found[:min(len(found), maxLabelMatches)] {
		matches = append(matches, map[string]any{"id": rows[i].ID, "label": cut(rows[i].Label, 200)})
	}
	return nil, fail(perr.InvalidParams, fmt.Sprintf("%d %s records have this label: pass the id of the one you mean", len(found), kind),
		map[string]any{"kind": kind, "matches": matches})
}
