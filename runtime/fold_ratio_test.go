package runtime_test

// Size of a folded description against the same page declared one
// capability per row (docs/protocol.md §4.1 record-template folding). Byte counts
// are deterministic, so this is a unit test; timings live in bench_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

const (
	foldRatioRows    = 500
	foldRatioVisible = 20 // a virtualized table renders 20 rows, 480 are offscreen
)

// foldRatioActions are the three row actions of the orders table.
func foldRatioActions() []runtime.Action {
	return []runtime.Action{
		{ID: "approve", Title: "Approve order", Description: "Approve a pending order",
			Params: map[string]runtime.Param{"note": {Type: "string", Description: "A note for the customer"}}},
		{ID: "refund", Title: "Refund order", Description: "Refund a paid order", Risk: schema.RiskDestructive,
			Params: map[string]runtime.Param{
				"amount": {Type: "number", Required: true, Description: "Amount to refund"},
				"reason": {Type: "string", Description: "Why the order is refunded"},
			}},
		{ID: "open", Title: "Open order", Description: "Open the order's detail page", Risk: schema.RiskRead},
	}
}

func foldRatioRecords() []runtime.RecordItem {
	rows := make([]runtime.RecordItem, foldRatioRows)
	for i := range rows {
		rows[i] = runtime.RecordItem{ID: fmt.Sprintf("ord_%d", i+1), Label: fmt.Sprintf("#%d · pending", 1001+i),
			Offscreen: i >= foldRatioVisible}
	}
	return rows
}

// foldRatioPage builds the orders page; declare adds the row actions.
func foldRatioPage(t *testing.T, declare func(rt *runtime.Runtime) error) *runtime.Runtime {
	t.Helper()
	lim := runtime.DefaultLimits()
	lim.MaxCapabilities = 10000
	lim.MaxBytes = 16 << 20
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithLimits(lim), runtime.WithClock(runtime.NewFakeClock(0)))
	rows := foldRatioRecords()
	if _, err := rt.DeclareRecords(runtime.Records{Kind: "order",
		Read: func(context.Context) ([]runtime.RecordItem, error) { return rows, nil }}); err != nil {
		t.Fatal(err)
	}
	if err := declare(rt); err != nil {
		t.Fatal(err)
	}
	return rt
}

// foldRatioDescribe describes the page and returns the result bytes (the
// SurfaceDescription as sent) and their decoding.
func foldRatioDescribe(t *testing.T, rt *runtime.Runtime) ([]byte, schema.SurfaceDescription) {
	t.Helper()
	out := rt.Handle(context.Background(), []byte(`{"protocol":"pling.surface/0.1","id":"d1","method":"describe"}`))
	var resp schema.SurfaceResponse
	if err := json.Unmarshal(out, &resp); err != nil || !resp.OK {
		t.Fatalf("describe failed: %v %.300s", err, out)
	}
	var d schema.SurfaceDescription
	if err := json.Unmarshal(resp.Result, &d); err != nil {
		t.Fatal(err)
	}
	return resp.Result, d
}

// checkFolded asserts the folded description lists the three row actions
// once each and reaches every row.
func checkFolded(t *testing.T, d schema.SurfaceDescription) {
	t.Helper()
	if len(d.Capabilities) != 3 || d.Truncated != nil {
		t.Fatalf("folded page: %d capabilities (want 3), truncated %+v", len(d.Capabilities), d.Truncated)
	}
	for _, c := range d.Capabilities {
		r := c.Record
		if r == nil {
			t.Fatalf("%s: no record metadata", c.ID)
		}
		if r.Total != foldRatioRows || r.Offscreen != foldRatioRows-foldRatioVisible || len(r.Visible) != foldRatioVisible {
			t.Errorf("%s: total %d offscreen %d visible %d; want %d, %d, %d", c.ID, r.Total, r.Offscreen, len(r.Visible),
				foldRatioRows, foldRatioRows-foldRatioVisible, foldRatioVisible)
		}
		if r.Kind != "order" || r.Template == "" {
			t.Errorf("%s: kind %q template %q", c.ID, r.Kind, r.Template)
		}
	}
}

// declareEach declares, for each row action, every variant of it.
func declareEach(variants func(a runtime.Action) []runtime.Action) func(*runtime.Runtime) error {
	return func(rt *runtime.Runtime) error {
		for _, a := range foldRatioActions() {
			for _, v := range variants(a) {
				if _, err := rt.DeclareAction(v); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// declareTemplates declares the row actions once each, as templates of
// the order records.
var declareTemplates = declareEach(func(a runtime.Action) []runtime.Action {
	a.Record = &runtime.RecordRef{Kind: "order"}
	return []runtime.Action{a}
})

func TestFoldRatio(t *testing.T) {
	folded := foldRatioPage(t, declareTemplates)
	perRow := foldRatioPage(t, declareEach(func(a runtime.Action) []runtime.Action {
		out := make([]runtime.Action, foldRatioRows)
		for i := range out {
			out[i] = a
			out[i].ID = fmt.Sprintf("%s_ord_%d", a.ID, i+1)
		}
		return out
	}))

	fb, fd := foldRatioDescribe(t, folded)
	pb, pd := foldRatioDescribe(t, perRow)

	checkFolded(t, fd)
	if len(pd.Capabilities) != 3*foldRatioRows || pd.Truncated != nil {
		t.Fatalf("per-row page: %d capabilities listed (want %d), truncated %+v: the baseline must be complete",
			len(pd.Capabilities), 3*foldRatioRows, pd.Truncated)
	}
	t.Logf("folded: %d bytes (3 capabilities); per-row: %d bytes (%d capabilities); per-row/folded = %.1f×",
		len(fb), len(pb), len(pd.Capabilities), float64(len(pb))/float64(len(fb)))
	if len(fb)*20 > len(pb) {
		t.Errorf("folded description is %d bytes, more than 1/20 of the per-row %d bytes (ratio %.1f×)",
			len(fb), len(pb), float64(len(pb))/float64(len(fb)))
	}
}

// TestFoldRatioPerRowDeclarations declares the row actions per row, as a
// table component does (RecordRef with ID): the runtime folds them, so the
// description has the same size class as the template page.
func TestFoldRatioPerRowDeclarations(t *testing.T) {
	templ := foldRatioPage(t, declareTemplates)
	rows := foldRatioPage(t, declareEach(func(a runtime.Action) []runtime.Action {
		var out []runtime.Action
		for _, r := range foldRatioRecords() {
			a.Record = &runtime.RecordRef{Kind: "order", ID: r.ID}
			out = append(out, a)
		}
		return out
	}))
	tb, _ := foldRatioDescribe(t, templ)
	rb, rd := foldRatioDescribe(t, rows)
	checkFolded(t, rd)
	t.Logf("template-declared: %d bytes; row-declared (folded by the runtime): %d bytes", len(tb), len(rb))
	// The size claim: folding per-row declarations gives the template page's
	// description, byte for byte.
	if diff := cmp.Diff(string(tb), string(rb)); diff != "" {
		t.Errorf("row-declared description (%d bytes) is not the template-declared one (%d bytes) (-template +rows):\n%s", len(rb), len(tb), diff)
	}
}
