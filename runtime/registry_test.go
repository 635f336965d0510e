package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// tagged returns an action "save" whose handler appends tag to *ran.
func tagged(title, tag string, ran *[]string, mu *sync.Mutex) Action {
	return Action{ID: "save", Title: title, Run: func(context.Context, *Call) (any, error) {
		mu.Lock()
		*ran = append(*ran, tag)
		mu.Unlock()
		return tag, nil
	}}
}

func TestDedupIdenticalDeclarations(t *testing.T) {
	e := newEnv(t)
	var ran []string
	var mu sync.Mutex
	h1 := mustDeclare(t, e.rt, tagged("Save", "first", &ran, &mu))
	h2 := mustDeclare(t, e.rt, tagged("Save", "second", &ran, &mu)) // StrictMode remount: same data, new closure

	d := e.describe("")
	if diff := cmp.Diff([]string{"save"}, capIDs(d)); diff != "" {
		t.Fatalf("two identical declarations are not one capability (-want +got):\n%s", diff)
	}
	run := func() string {
		t.Helper()
		mu.Lock()
		ran = nil
		mu.Unlock()
		resp, res := e.invoke("save", nil)
		if got := outcome(t, resp); got != "ok" {
			return got
		}
		mu.Lock()
		defer mu.Unlock()
		if len(ran) != 1 {
			t.Fatalf("handlers ran %v, want exactly one", ran)
		}
		if res.Value != ran[0] {
			t.Errorf("value %v from handler %s", res.Value, ran[0])
		}
		return ran[0]
	}
	if got := run(); got != "second" {
		t.Errorf("ran %q, want the newest declaration's handler", got)
	}
	h2.Dispose()
	if got := capIDs(e.describe("")); !cmp.Equal(got, []string{"save"}) {
		t.Errorf("after disposing one of two, capabilities = %v", got)
	}
	if got := run(); got != "first" {
		t.Errorf("after disposing the newest, ran %q, want first", got)
	}
	h2.Dispose() // idempotent: must not remove the other declaration
	h2.Dispose()
	if got := run(); got != "first" {
		t.Errorf("after disposing the same handle again, ran %q, want first", got)
	}
	h1.Dispose()
	if got := capIDs(e.describe("")); len(got) != 0 {
		t.Errorf("after disposing both, capabilities = %v", got)
	}
	if got := run(); got != string(perr.ActionNotFound) {
		t.Errorf("invoke after disposing both = %s, want ACTION_NOT_FOUND", got)
	}
	var nilHandle *Handle
	nilHandle.Dispose() // a nil handle (a refused declaration) is safe to dispose
}

// Disposing the middle one of three identical declarations keeps the
// newest running.
func TestDedupDisposeMiddle(t *testing.T) {
	e := newEnv(t)
	var ran []string
	var mu sync.Mutex
	mustDeclare(t, e.rt, tagged("Save", "a", &ran, &mu))
	hb := mustDeclare(t, e.rt, tagged("Save", "b", &ran, &mu))
	mustDeclare(t, e.rt, tagged("Save", "c", &ran, &mu))
	hb.Dispose()
	if _, res := e.invoke("save", nil); res.Value != "c" {
		t.Errorf("value = %v, want c", res.Value)
	}
}

func TestConflictingActions(t *testing.T) {
	tests := []struct {
		name   string
		second func(ran *[]string, mu *sync.Mutex) Action
	}{
		{"different title", func(ran *[]string, mu *sync.Mutex) Action { return tagged("Save draft", "second", ran, mu) }},
		{"different identity", func(ran *[]string, mu *sync.Mutex) Action {
			a := tagged("Save", "second", ran, mu)
			a.Identity = "v2"
			return a
		}},
		{"different params", func(ran *[]string, mu *sync.Mutex) Action {
			a := tagged("Save", "second", ran, mu)
			a.Params = map[string]Param{"note": {Type: "string"}}
			return a
		}},
		{"different risk", func(ran *[]string, mu *sync.Mutex) Action {
			a := tagged("Save", "second", ran, mu)
			a.Risk = schema.RiskDestructive
			return a
		}},
		{"approval", func(ran *[]string, mu *sync.Mutex) Action {
			a := tagged("Save", "second", ran, mu)
			a.Approval = true
			return a
		}},
		{"an availability check", func(ran *[]string, mu *sync.Mutex) Action {
			a := tagged("Save", "second", ran, mu)
			a.Available = func(context.Context, string) Availability { return Available }
			return a
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			var ran []string
			var mu sync.Mutex
			h1 := mustDeclare(t, e.rt, tagged("Save", "first", &ran, &mu))
			h2, err := e.rt.DeclareAction(tt.second(&ran, &mu))
			if h2 == nil {
				t.Fatal("a conflicting declaration returned no handle")
			}
			var pe *perr.Error
			if !errors.As(err, &pe) || pe.Code() != perr.DuplicateActionID {
				t.Fatalf("err = %v, want DUPLICATE_ACTION_ID", err)
			}
			if diff := cmp.Diff(map[string]any{"id": "save"}, pe.Details()); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
			if !strings.Contains(pe.Message(), `"save"`) {
				t.Errorf("message %q does not name the duplicate id", pe.Message())
			}

			d := e.describe("")
			if len(d.Capabilities) != 0 {
				t.Errorf("a conflicting id is listed: %v", capIDs(d))
			}
			u := unavailableByID(d, "save")
			if u == nil || u.Code != string(perr.DuplicateActionID) {
				t.Errorf("context.unavailable = %+v, want save with DUPLICATE_ACTION_ID", d.Context.Unavailable)
			}
			if _, res := e.invoke("save", nil); res.Error == nil || res.Error.Code != string(perr.DuplicateActionID) {
				t.Errorf("invoke result = %+v, want DUPLICATE_ACTION_ID", res)
			}
			if len(ran) != 0 || len(e.rt.Runs()) != 0 {
				t.Errorf("a handler ran during a conflict: %v %v", ran, e.rt.Runs())
			}

			// A third declaration identical to the first does not settle it.
			h3, err := e.rt.DeclareAction(tagged("Save", "third", &ran, &mu))
			if perrCode(t, err) != perr.DuplicateActionID {
				t.Errorf("third declaration: %v", err)
			}
			h3.Dispose()

			h2.Dispose()
			if got := capIDs(e.describe("")); !cmp.Equal(got, []string{"save"}) {
				t.Errorf("after disposing the second, capabilities = %v", got)
			}
			if _, res := e.invoke("save", nil); res.Value != "first" {
				t.Errorf("after disposing the second, result = %+v, want the first's value", res)
			}
			h1.Dispose()
		})
	}
}

// Disposing the first of two conflicting declarations leaves the second.
func TestConflictDisposeFirst(t *testing.T) {
	e := newEnv(t)
	var ran []string
	var mu sync.Mutex
	h1 := mustDeclare(t, e.rt, tagged("Save", "first", &ran, &mu))
	if _, err := e.rt.DeclareAction(tagged("Save draft", "second", &ran, &mu)); err == nil {
		t.Fatal("no conflict reported")
	}
	h1.Dispose()
	d := e.describe("")
	if c := capByID(d, "save"); c == nil || c.Title != "Save draft" {
		t.Errorf("capabilities = %+v, want the second declaration", d.Capabilities)
	}
	if _, res := e.invoke("save", nil); res.Value != "second" {
		t.Errorf("result = %+v", res)
	}
}

func TestConflictingStatesAndGuides(t *testing.T) {
	e := newEnv(t)
	a, b := newVar(1), newVar(2)
	hs1, err := e.rt.DeclareState(State{Key: "cart.count", Description: "Items", Read: func(context.Context) (any, error) { return a.get(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	// Identical (another closure): one state, read through the newest.
	hs2, err := e.rt.DeclareState(State{Key: "cart.count", Description: "Items", Read: func(context.Context) (any, error) { return b.get(), nil }})
	if err != nil {
		t.Fatalf("identical state: %v", err)
	}
	if got := e.describe("").Context.States; !cmp.Equal(got, map[string]any{"cart.count": float64(2)}) {
		t.Errorf("states = %v, want the newest reader's value", got)
	}
	hs3, err := e.rt.DeclareState(State{Key: "cart.count", Description: "Lines", Read: func(context.Context) (any, error) { return 3, nil }})
	if hs3 == nil || perrCode(t, err) != perr.DuplicateStateKey {
		t.Fatalf("conflicting state: %v, %v", hs3, err)
	}
	hg1, err := e.rt.DeclareGuide(Guide{Target: "checkout", Label: "Checkout"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.DeclareGuide(Guide{Target: "checkout", Label: "Checkout"}); err != nil {
		t.Fatalf("identical guide: %v", err)
	}
	hg3, err := e.rt.DeclareGuide(Guide{Target: "checkout", Label: "Pay now"})
	if hg3 == nil || perrCode(t, err) != perr.DuplicateGuideTarget {
		t.Fatalf("conflicting guide: %v, %v", hg3, err)
	}

	d := e.describe("")
	if _, ok := d.Context.States["cart.count"]; ok {
		t.Errorf("a conflicting state is listed: %v", d.Context.States)
	}
	if len(d.Context.Guides) != 0 {
		t.Errorf("a conflicting guide is listed: %v", d.Context.Guides)
	}
	want := []schema.Unavailable{
		{ID: "cart.count", Code: string(perr.DuplicateStateKey), Reason: "Two different states are declared under this key"},
		{ID: "checkout", Code: string(perr.DuplicateGuideTarget), Reason: "Two different guides are declared under this target"},
	}
	if diff := cmp.Diff(want, d.Context.Unavailable); diff != "" {
		t.Errorf("unavailable (-want +got):\n%s", diff)
	}

	hs3.Dispose()
	hg3.Dispose()
	d = e.describe("")
	if diff := cmp.Diff(map[string]any{"cart.count": float64(2)}, d.Context.States); diff != "" {
		t.Errorf("states after disposing the conflict (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]schema.Guide{{Target: "checkout", Label: "Checkout"}}, d.Context.Guides); diff != "" {
		t.Errorf("guides after disposing the conflict (-want +got):\n%s", diff)
	}
	if len(d.Context.Unavailable) != 0 {
		t.Errorf("unavailable = %v", d.Context.Unavailable)
	}
	hs2.Dispose()
	hs1.Dispose()
	if got := e.describe("").Context.States; len(got) != 0 {
		t.Errorf("states after disposing all = %v", got)
	}
	hg1.Dispose() // the identical second guide is still declared
	if got := e.describe("").Context.Guides; len(got) != 1 {
		t.Errorf("guides = %v, want the remaining identical declaration", got)
	}
}

// DeclareRegion documents: "Two different regions under one id conflict;
// the region then counts as inactive." An action in that region must then
// not run.
func TestConflictingRegionsCountAsInactive(t *testing.T) {
	e := newEnv(t)
	var n atomic.Int64
	mustDeclare(t, e.rt, Action{ID: "pay", Title: "Pay", Region: "checkout", Run: counter(&n, true)})
	if _, err := e.rt.DeclareRegion(Region{ID: "checkout", Title: "Checkout"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.DeclareRegion(Region{ID: "checkout", Title: "Payment"}); err != nil {
		t.Fatalf("DeclareRegion reports region conflicts through describe, not an error: %v", err)
	}
	d := e.describe("")
	if capByID(d, "pay") != nil {
		t.Errorf("BUG: registry.go DeclareRegion: the action of a conflicting region is listed as available; " +
			"its doc says the region counts as inactive (fold.go snapshot() drops conflicting regions, so regionView.blocked treats the region as unknown, i.e. active)")
	}
	if _, res := e.invoke("pay", nil); res.Error == nil || res.Error.Code != string(perr.ActionUnavailable) {
		t.Errorf("BUG: invoking an action of a conflicting region = %+v, want ACTION_UNAVAILABLE", res)
	}
}

func TestRegionsAndModal(t *testing.T) {
	e := newEnv(t)
	open := newVar(false)
	active := newVar(true)
	mustDeclare(t, e.rt, Action{ID: "orders.refresh", Title: "Refresh", Region: "orders"})
	mustDeclare(t, e.rt, Action{ID: "dialog.ok", Title: "OK", Region: "dialog"})
	mustDeclare(t, e.rt, Action{ID: "global", Title: "Global"})
	if _, err := e.rt.DeclareRegion(Region{ID: "orders", Title: "Orders", Active: func(context.Context) bool { return active.get().(bool) }}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.DeclareRegion(Region{ID: "dialog", Modal: true, Active: func(context.Context) bool { return open.get().(bool) }}); err != nil {
		t.Fatal(err)
	}
	d := e.describe("")
	// A closed modal's own actions are unavailable (its region is inactive).
	if diff := cmp.Diff([]string{"global", "orders.refresh"}, capIDs(d)); diff != "" {
		t.Errorf("closed modal: capabilities (-want +got):\n%s", diff)
	}
	if u := unavailableByID(d, "dialog.ok"); u == nil || u.Reason != "Its region is not active" {
		t.Errorf("dialog.ok: unavailable = %+v", d.Context.Unavailable)
	}
	open.set(true)
	d = e.describe("")
	if diff := cmp.Diff([]string{"dialog.ok"}, capIDs(d)); diff != "" {
		t.Errorf("open modal hides the rest (-want +got):\n%s", diff)
	}
	if len(d.Context.Unavailable) != 0 {
		t.Errorf("hidden actions are not listed as unavailable: %+v", d.Context.Unavailable)
	}
	if _, res := e.invoke("global", nil); res.Error == nil || res.Error.Code != string(perr.ActionUnavailable) {
		t.Errorf("invoke behind an open modal = %+v", res)
	}
	open.set(false)
	active.set(false)
	if _, res := e.invoke("orders.refresh", nil); res.Error == nil || res.Error.Code != string(perr.ActionUnavailable) {
		t.Errorf("invoke in an inactive region = %+v", res)
	}
	want := []schema.Region{{ID: "dialog", Active: false, Modal: true}, {ID: "orders", Title: "Orders", Active: false}}
	if diff := cmp.Diff(want, e.describe("").Context.Regions); diff != "" {
		t.Errorf("context.regions (-want +got):\n%s", diff)
	}
}

// orderRecords declares n orders ord_1…ord_n; the ones in offscreen are
// offscreen.
func orderRecords(t *testing.T, rt *Runtime, n int, offscreen ...int) *Handle {
	t.Helper()
	off := map[int]bool{}
	for _, i := range offscreen {
		off[i] = true
	}
	h, err := rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) {
		var rs []RecordItem
		for i := 1; i <= n; i++ {
			rs = append(rs, RecordItem{ID: fmt.Sprintf("ord_%d", i), Label: fmt.Sprintf("#%d", 1000+i), Offscreen: off[i]})
		}
		return rs, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestFoldPerRowDeclarations(t *testing.T) {
	e := newEnv(t)
	orderRecords(t, e.rt, 3, 3)
	var mu sync.Mutex
	var calls []Call
	handles := map[string]*Handle{}
	for _, id := range []string{"ord_1", "ord_2", "ord_3"} {
		handles[id] = mustDeclare(t, e.rt, Action{ID: "approve", Title: "Approve order",
			Params: map[string]Param{"note": {Type: "string"}},
			Record: &RecordRef{Kind: "order", ID: id},
			Run: func(_ context.Context, c *Call) (any, error) {
				mu.Lock()
				calls = append(calls, *c)
				mu.Unlock()
				return id, nil
			}})
	}
	d := e.describe("")
	if diff := cmp.Diff([]string{"approve@order"}, capIDs(d)); diff != "" {
		t.Fatalf("per-row declarations are not folded (-want +got):\n%s", diff)
	}
	c := d.Capabilities[0]
	wantRec := &schema.RecordTemplate{Kind: "order", Template: "approve:{record}", Total: 3, Visible: []string{"ord_1", "ord_2"}, Offscreen: 1}
	if diff := cmp.Diff(wantRec, c.Record); diff != "" {
		t.Errorf("record metadata (-want +got):\n%s", diff)
	}
	if _, ok := c.InputSchema.Properties["record"]; ok {
		t.Errorf("record is repeated in the visible properties: %v", c.InputSchema.Properties)
	}

	tests := []struct {
		name  string
		input map[string]any
		want  string
		value any
	}{
		{"a visible row runs its own declaration", map[string]any{"record": "ord_2", "note": "ok"}, "ok", "ord_2"},
		{"record is accepted by the validator", map[string]any{"record": "ord_1"}, "ok", "ord_1"},
		{"an unknown record", map[string]any{"record": "ord_9"}, string(perr.ActionNotFound), nil},
		{"an offscreen record", map[string]any{"record": "ord_3"}, string(perr.ActionUnavailable), nil},
		{"no record", map[string]any{"note": "x"}, string(perr.InvalidParams), nil},
		{"an empty record", map[string]any{"record": ""}, string(perr.InvalidParams), nil},
		{"a record that is not a string", map[string]any{"record": 1}, string(perr.InvalidParams), nil},
		{"the other params are still checked", map[string]any{"record": "ord_1", "note": 5}, string(perr.InvalidParams), nil},
		{"unknown params are still rejected", map[string]any{"record": "ord_1", "extra": 5}, string(perr.InvalidParams), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, res := e.invoke("approve@order", tt.input)
			wantOutcome(t, res, tt.want)
			if tt.value != nil && res.Value != tt.value {
				t.Errorf("value %v, want %v", res.Value, tt.value)
			}
		})
	}
	mu.Lock()
	if len(calls) != 2 || calls[0].Capability != "approve@order" || calls[0].Action != "approve" || calls[0].Record != "ord_2" {
		t.Errorf("calls = %+v", calls)
	} else if _, ok := calls[0].Input["record"]; ok {
		t.Errorf("the handler sees record in its input: %v", calls[0].Input)
	}
	mu.Unlock()
	if got := e.rt.Runs(); !cmp.Equal(got, map[string]int{"approve": 2}) {
		t.Errorf("Runs() = %v, want the base id counted", got)
	}

	// Without a template, a row whose declaration is gone is not found.
	handles["ord_2"].Dispose()
	if _, res := e.invoke("approve@order", map[string]any{"record": "ord_2"}); res.Error == nil || res.Error.Code != string(perr.ActionNotFound) {
		t.Errorf("disposed row: %+v", res)
	}
	if rec := e.describe("").Capabilities[0].Record; rec.Total != 2 || !cmp.Equal(rec.Visible, []string{"ord_1"}) {
		t.Errorf("record after disposing a row = %+v", rec)
	}
	handles["ord_1"].Dispose()
	handles["ord_3"].Dispose()
	if got := capIDs(e.describe("")); len(got) != 0 {
		t.Errorf("capabilities after disposing every row = %v", got)
	}
}

func TestFoldTemplate(t *testing.T) {
	e := newEnv(t)
	orderRecords(t, e.rt, 12, 11, 12)
	var n atomic.Int64
	h := mustDeclare(t, e.rt, Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"},
		Run: func(_ context.Context, c *Call) (any, error) { n.Add(1); return c.Record, nil }})
	d := e.describe("")
	want := &schema.RecordTemplate{Kind: "order", Template: "approve:{record}", Total: 12, Offscreen: 2,
		Visible: []string{"ord_1", "ord_2", "ord_3", "ord_4", "ord_5", "ord_6", "ord_7", "ord_8", "ord_9", "ord_10"}}
	if diff := cmp.Diff(want, d.Capabilities[0].Record); diff != "" {
		t.Errorf("template record metadata, rows in natural order (-want +got):\n%s", diff)
	}
	for _, rec := range []string{"ord_1", "ord_10"} {
		if _, res := e.invoke("approve@order", map[string]any{"record": rec}); res.Value != rec {
			t.Errorf("record %s: %+v", rec, res)
		}
	}
	if _, res := e.invoke("approve@order", map[string]any{"record": "ord_13"}); res.Error == nil || res.Error.Code != string(perr.ActionNotFound) {
		t.Errorf("unknown record: %+v", res)
	}
	if _, res := e.invoke("approve@order", map[string]any{"record": "ord_11"}); res.Error == nil || res.Error.Code != string(perr.ActionUnavailable) {
		t.Errorf("offscreen record: %+v", res)
	}
	for _, id := range []string{"approve", "approve:ord_1"} {
		if _, res := e.invoke(id, map[string]any{"record": "ord_1"}); res.Error == nil || res.Error.Code != string(perr.ActionNotFound) {
			t.Errorf("invoke %q: %+v, want ACTION_NOT_FOUND (only the folded id is a capability)", id, res)
		}
	}
	// describe's options.maxRecords bounds the visible ids.
	req := e.describeReq()
	req["options"] = map[string]any{"maxRecords": 3}
	resp, _ := e.send(req)
	var d3 schema.SurfaceDescription
	if err := json.Unmarshal(resp.Result, &d3); err != nil {
		t.Fatal(err)
	}
	if rec := d3.Capabilities[0].Record; !cmp.Equal(rec.Visible, []string{"ord_1", "ord_2", "ord_3"}) || !rec.Truncated {
		t.Errorf("maxRecords 3: record = %+v", rec)
	}
	h.Dispose()

	// AllowOffscreen lets the template run on offscreen rows.
	mustDeclare(t, e.rt, Action{ID: "archive", Title: "Archive", Record: &RecordRef{Kind: "order", AllowOffscreen: true},
		Run: func(_ context.Context, c *Call) (any, error) { return c.Record, nil }})
	if _, res := e.invoke("archive@order", map[string]any{"record": "ord_12"}); res.Value != "ord_12" {
		t.Errorf("allowOffscreen: %+v", res)
	}
	if rec := capByID(e.describe(""), "archive@order").Record; !rec.AllowOffscreen {
		t.Errorf("allowOffscreen is not described: %+v", rec)
	}
}

// A template and per-row declarations of one fold: the row's own
// declaration runs for its record, the template for the others.
func TestFoldTemplateAndRows(t *testing.T) {
	e := newEnv(t)
	orderRecords(t, e.rt, 3)
	tmpl := Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"},
		Run: func(context.Context, *Call) (any, error) { return "template", nil }}
	row := tmpl
	row.Record = &RecordRef{Kind: "order", ID: "ord_2"}
	row.Run = func(context.Context, *Call) (any, error) { return "row", nil }
	mustDeclare(t, e.rt, tmpl)
	mustDeclare(t, e.rt, row)
	for rec, want := range map[string]string{"ord_1": "template", "ord_2": "row", "ord_3": "template"} {
		if _, res := e.invoke("approve@order", map[string]any{"record": rec}); res.Value != want {
			t.Errorf("record %s ran %v, want %s", rec, res.Value, want)
		}
	}
}

func TestFoldConflicts(t *testing.T) {
	tests := []struct {
		name string
		a, b Action
	}{
		{"two templates with different titles",
			Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"}},
			Action{ID: "approve", Title: "Approve now", Record: &RecordRef{Kind: "order"}}},
		{"two rows with different titles",
			Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order", ID: "ord_1"}},
			Action{ID: "approve", Title: "Approve now", Record: &RecordRef{Kind: "order", ID: "ord_2"}}},
		{"a template and a row that differ",
			Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"}},
			Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order", ID: "ord_1", AllowOffscreen: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			orderRecords(t, e.rt, 2)
			mustDeclare(t, e.rt, tt.a)
			h, err := e.rt.DeclareAction(tt.b)
			var pe *perr.Error
			if !errors.As(err, &pe) || pe.Code() != perr.DuplicateActionID {
				t.Fatalf("err = %v, want DUPLICATE_ACTION_ID", err)
			}
			if pe.Details()["id"] != "approve@order" {
				t.Errorf("details = %v, want the folded id", pe.Details())
			}
			d := e.describe("")
			if u := unavailableByID(d, "approve@order"); u == nil || u.Code != string(perr.DuplicateActionID) {
				t.Errorf("unavailable = %+v", d.Context.Unavailable)
			}
			if _, res := e.invoke("approve@order", map[string]any{"record": "ord_1"}); res.Error == nil || res.Error.Code != string(perr.DuplicateActionID) {
				t.Errorf("invoke = %+v", res)
			}
			h.Dispose()
			if capByID(e.describe(""), "approve@order") == nil {
				t.Errorf("disposing the conflicting declaration did not restore the fold")
			}
		})
	}
}

// Identical per-row declarations of the same row are reference-counted
// like plain actions.
func TestFoldRowDedup(t *testing.T) {
	e := newEnv(t)
	orderRecords(t, e.rt, 1)
	a := Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order", ID: "ord_1"}}
	h1 := mustDeclare(t, e.rt, a)
	h2 := mustDeclare(t, e.rt, a)
	h1.Dispose()
	if capByID(e.describe(""), "approve@order") == nil {
		t.Fatalf("one of two identical row declarations disposed removed the fold")
	}
	h2.Dispose()
	if got := capIDs(e.describe("")); len(got) != 0 {
		t.Errorf("capabilities = %v", got)
	}
	if len(e.rt.reg.folds) != 0 {
		t.Errorf("an empty fold is kept: %v", e.rt.reg.folds)
	}
}

func TestNaturalLess(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"ord_2", "ord_10", true},
		{"ord_10", "ord_2", false},
		{"ord_1", "ord_1", false},
		{"a", "b", true},
		{"ord_01", "ord_1", true}, // equal numbers: the spelling decides, deterministically
		{"ord_1", "ord_01", false},
		{"ord_9x", "ord_10a", true},
		{"x", "x1", true},
		{"", "a", true},
	}
	for _, tt := range tests {
		t.Run(tt.a+"<"+tt.b, func(t *testing.T) {
			if got := naturalLess(tt.a, tt.b); got != tt.want {
				t.Errorf("naturalLess(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

// Records of one kind declared twice are joined in declaration order; a row
// id seen twice keeps its first occurrence; invalid row ids are skipped.
func TestRecordsJoined(t *testing.T) {
	e := newEnv(t)
	read := func(items ...RecordItem) func(context.Context) ([]RecordItem, error) {
		return func(context.Context) ([]RecordItem, error) { return items, nil }
	}
	if _, err := e.rt.DeclareRecords(Records{Kind: "order", Read: read(RecordItem{ID: "b", Label: "B1"}, RecordItem{ID: "bad id"})}); err != nil {
		t.Fatal(err)
	}
	h, err := e.rt.DeclareRecords(Records{Kind: "order", Read: read(RecordItem{ID: "a", Label: "A", Offscreen: true}, RecordItem{ID: "b", Label: "B2"})})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]schema.RecordSet{"order": {Total: 2, Items: []schema.RecordItem{{ID: "b", Label: "B1"}, {ID: "a", Label: "A", Offscreen: true}}}}
	if diff := cmp.Diff(want, e.describe("").Context.Records); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	h.Dispose()
	h.Dispose()
	want = map[string]schema.RecordSet{"order": {Total: 1, Items: []schema.RecordItem{{ID: "b", Label: "B1"}}}}
	if diff := cmp.Diff(want, e.describe("").Context.Records); diff != "" {
		t.Errorf("records after dispose (-want +got):\n%s", diff)
	}
}

// Equal registries describe to equal bytes, whatever the declaration
// order; the revision changes exactly when the listed set changes.
func TestDescribeDeterministicAndRevision(t *testing.T) {
	decls := []Action{
		{ID: "b.two", Title: "Two"},
		{ID: "a.one", Title: "One", Params: map[string]Param{"z": {Type: "string", Required: true}, "a": {Type: "integer", Required: true}}},
		{ID: "c.three", Title: "Three", Risk: schema.RiskRead},
	}
	e1, e2 := newEnv(t), newEnv(t)
	for i := range decls {
		mustDeclare(t, e1.rt, decls[i])
		mustDeclare(t, e2.rt, decls[len(decls)-1-i])
	}
	b1, b2 := e1.describeBytes(), e2.describeBytes()
	if b1 != b2 {
		t.Fatalf("equal registries describe differently:\n%s", cmp.Diff(b1, b2))
	}
	d := e1.describe("")
	if diff := cmp.Diff([]string{"a.one", "b.two", "c.three"}, capIDs(d)); diff != "" {
		t.Errorf("capabilities are not sorted (-want +got):\n%s", diff)
	}
	if got := d.Capabilities[0].InputSchema.Required; !cmp.Equal(got, []string{"a", "z"}) {
		t.Errorf("required = %v, want sorted", got)
	}
	rev := d.Revision
	// A state or a guide is not a capability: the revision stays.
	if _, err := e1.rt.DeclareState(newVar(0).state("x")); err != nil {
		t.Fatal(err)
	}
	if got := e1.describe("").Revision; got != rev {
		t.Errorf("revision changed with a state: %s → %s", rev, got)
	}
	h := mustDeclare(t, e1.rt, Action{ID: "d.four", Title: "Four"})
	rev2 := e1.describe("").Revision
	if rev2 == rev {
		t.Errorf("revision did not change when a capability was added")
	}
	h.Dispose()
	if got := e1.describe("").Revision; got != rev {
		t.Errorf("revision after removing the capability again = %s, want %s", got, rev)
	}
}

// TestNaturalLessPrefix: skipping the common prefix (back to the start of
// a digit run) orders every pair of ids as comparing them token by token
// from the start does.
func TestNaturalLessPrefix(t *testing.T) {
	const alphabet = "a0_19"
	var ids []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		ids = append(ids, prefix)
		if n == 0 {
			return
		}
		for i := range len(alphabet) {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 4)
	for _, a := range ids {
		for _, b := range ids {
			if got, want := naturalLess(a, b), naturalLessFrom(a, b); got != want {
				t.Fatalf("naturalLess(%q, %q) = %v, token by token %v", a, b, got, want)
			}
		}
	}
}

// TestAscending: ascending, which checks of each id only what it does
// not share with the one before it, answers as checking every id whole
// (validRecordID) and every pair (naturalLess) does: an invalid byte
// after a shared prefix, an id over the length bound that shares all of
// the one before it, a repeat and a step back all make it false.
func TestAscending(t *testing.T) {
	long := strings.Repeat("a", maxRecordID)
	whole := func(items []RecordItem) bool {
		for i, it := range items {
			if !validRecordID(it.ID) || i > 0 && !naturalLess(items[i-1].ID, it.ID) {
				return false
			}
		}
		return true
	}
	rows := func(ids ...string) []RecordItem {
		out := make([]RecordItem, len(ids))
		for i, id := range ids {
			out[i] = RecordItem{ID: id}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		ids  []string
		want bool
	}{
		{"in order", []string{"ord_2", "ord_10", "ord_11", "ord_100"}, true},
		{"empty", nil, true},
		{"invalid first", []string{"ord 1", "ord_2"}, false},
		{"invalid after the shared prefix", []string{"ord_1", "ord_1 2"}, false},
		{"over the bound, sharing all of the one before", []string{long, long + "b"}, false},
		{"an empty id", []string{"", "a"}, false},
		{"a repeat", []string{"ord_1", "ord_1"}, false},
		{"a step back", []string{"ord_10", "ord_9"}, false},
		{"leading zeros", []string{"ord_01", "ord_1", "ord_002"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := rows(tc.ids...)
			if got := ascending(items); got != tc.want || got != whole(items) {
				t.Errorf("ascending(%q) = %v, want %v (whole: %v)", tc.ids, got, tc.want, whole(items))
			}
		})
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "a0_19 "
	for n := 0; n < 20000; n++ {
		ids := make([]string, 1+r.IntN(4))
		for i := range ids {
			b := make([]byte, 1+r.IntN(5))
			for j := range b {
				b[j] = alphabet[r.IntN(len(alphabet))]
			}
			ids[i] = string(b)
		}
		items := rows(ids...)
		if got, want := ascending(items), whole(items); got != want {
			t.Fatalf("ascending(%q) = %v, checking each whole %v", ids, got, want)
		}
	}
}
