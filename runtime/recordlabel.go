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
// whole label, else by the label's first word.
func recordByIDOrLabel(rows []RecordItem, kind, rec string) (*RecordItem, *failure) {
	for i := range rows {
		if rows[i].ID == rec {
			return &rows[i], nil
		}
	}
	var found []int
	for i := range rows {
		if rows[i].Label == rec {
			found = append(found, i)
		}
	}
	if len(found) == 0 {
		for i := range rows {
			if f := strings.Fields(rows[i].Label); len(f) > 0 && f[0] == rec {
				found = append(found, i)
			}
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
