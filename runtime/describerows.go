package runtime

import (
	"context"

	"github.com/pling-go/pling/schema"
)

// rowReader reads each kind's records at most once for one request: a
// describe needs a kind's rows for every row action of the kind (its
// availability, its record template) and for the context, and a page's
// reader may build thousands of rows each time it runs (docs/page-api.md
// §2.5). A failed read is kept too, so a reader that throws is asked once.
type rowReader struct {
	snap  *snapshot
	limit int // rows in view a fold keeps (foldedRows.inView)
	got   map[string]rowsRead
	// shared holds, per kind, the folded rows of a template fold without
	// rows of its own: the same for every such row action of the kind.
	shared map[string]*foldedRows
}

type rowsRead struct {
	rows      []RecordItem
	ascending bool // in id order already (ascending)
	err       error
}

// foldedRows are the rows a fold applies to (foldRows), with what a
// describe reads off them: how many are offscreen, and the first limit
// of those in view.
type foldedRows struct {
	all        []RecordItem // id order; callers must not change them
	offscreen  int
	inView     []RecordItem
	moreInView bool // more rows are in view than inView holds
}

// newRowReader reads for one request listing up to maxRecords record ids
// per fold (0: it lists none).
func newRowReader(snap *snapshot, maxRecords int) *rowReader {
	return &rowReader{snap: snap, limit: max(maxAvailabilityRows, maxRecords)}
}

// read returns the rows of kind, reading them on first use.
func (r *rowReader) read(ctx context.Context, kind string) ([]RecordItem, error) {
	if got, ok := r.got[kind]; ok {
		return got.rows, got.err
	}
	rs, asc, err := readRows(ctx, r.snap.records[kind])
	if r.got == nil {
		r.got = map[string]rowsRead{}
	}
	r.got[kind] = rowsRead{rows: rs, ascending: asc, err: err}
	return rs, err
}

// fold returns the rows f applies to. Those of a template fold without
// rows of its own are the kind's rows in id order, folded once per
// request for every row action of the kind (and not copied when the page
// lists them in order).
func (r *rowReader) fold(ctx context.Context, f *foldView) (*foldedRows, error) {
	rs, err := r.read(ctx, f.kind)
	if err != nil {
		return nil, err
	}
	if !f.hasTemplate || len(f.rows) > 0 {
		return r.view(foldRows(f, rs)), nil
	}
	if fr, ok := r.shared[f.kind]; ok {
		return fr, nil
	}
	all := rs
	if !r.got[f.kind].ascending {
		all = foldRows(f, rs)
	}
	fr := r.view(all)
	if r.shared == nil {
		r.shared = map[string]*foldedRows{}
	}
	r.shared[f.kind] = fr
	return fr, nil
}

func (r *rowReader) view(all []RecordItem) *foldedRows {
	fr := &foldedRows{all: all}
	for _, row := range all {
		switch {
		case row.Offscreen:
			fr.offscreen++
		case len(fr.inView) < r.limit:
			fr.inView = append(fr.inView, row)
		default:
			fr.moreInView = true
		}
	}
	return fr
}

// maxAvailabilityRows bounds how many rows of a fold describe asks.
const maxAvailabilityRows = schema.AvailabilityRows

// capAvailable is whether a capability is listed as available. A row
// action's check may be written per row (`(id) => byId(id).status ===
// "open" || "already closed"`), so when the check without a record says
// no (or throws), the fold is asked row by row, up to
// maxAvailabilityRows of its known rows: it is available when any row is,
// and invoke decides for the one row it is called on (RATIONALE "Why is a
// row action available when any of its rows is?"). With no row available
// the reason is the first row's. With count, a row action that is
// available and has an availability check is also asked for each of its
// rows in view (the first maxAvailabilityRows of them), and rows is how
// many of them it can run on (schema.RecordTemplate.Available); else rows
// is -1.
func (rt *Runtime) capAvailable(ctx context.Context, records *rowReader, c *capEntry, count bool) (av Availability, rows int) {
	av = checkAvailable(ctx, &c.action, "")
	count = count && c.fold != nil && c.fold.checked(&c.action)
	if c.fold == nil || av.OK && !count {
		return av, -1
	}
	fr, err := records.fold(ctx, c.fold)
	if err != nil {
		return av, -1
	}
	all := fr.all
	ask := func(row RecordItem) (Availability, bool) {
		a, ok := c.fold.resolveRow(row.ID)
		if !ok {
			return Availability{}, false
		}
		return checkAvailable(ctx, &a, row.ID), true
	}
	if !av.OK {
		first, found := av, false
		for i, row := range all[:min(len(all), maxAvailabilityRows)] {
			rav, ok := ask(row)
			if ok && rav.OK {
				av, found = rav, true
				break
			}
			if ok && i == 0 {
				first = rav
			}
		}
		if !found {
			return first, -1
		}
	}
	if !count {
		return av, -1
	}
	for _, row := range fr.inView[:min(len(fr.inView), maxAvailabilityRows)] {
		if rav, ok := ask(row); ok && rav.OK {
			rows++
		}
	}
	return av, rows
}

// checkAvailable asks an action's Available; a panic counts as unavailable.
func checkAvailable(ctx context.Context, a *Action, record string) (av Availability) {
	if a.Available == nil {
		return Available
	}
	defer func() {
		if r := recover(); r != nil {
			av = checkFailed(panicError(r))
		}
	}()
	return a.Available(ctx, record)
}
