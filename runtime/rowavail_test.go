package runtime

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
)

// TestRowAvailability: a row action whose availability check is written
// per row is listed while any known row is available, invoke decides for
// its own row with the row's reason, and with no row available the
// capability is unavailable with the first row's reason.
func TestRowAvailability(t *testing.T) {
	var mu sync.Mutex
	status := map[string]string{"t1": "open", "t2": "closed", "t3": "open"}
	e := newEnv(t)
	if _, err := e.rt.DeclareRecords(Records{Kind: "ticket", Read: func(context.Context) ([]RecordItem, error) {
		return []RecordItem{{ID: "t1", Label: "Printer jam"}, {ID: "t2", Label: "VPN down"}, {ID: "t3", Label: "New laptop"}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	mustDeclare(t, e.rt, Action{ID: "close", Title: "Close ticket", Record: &RecordRef{Kind: "ticket"},
		Available: func(_ context.Context, id string) Availability {
			mu.Lock()
			defer mu.Unlock()
			st, ok := status[id]
			if !ok {
				panic("no such ticket") // byId(undefined).status throws
			}
			if st == "open" {
				return Available
			}
			return Unavailable("already closed")
		},
		Run: func(_ context.Context, c *Call) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			status[c.Record] = "closed"
			return true, nil
		}})

	d := e.describe("")
	if len(d.Capabilities) != 1 || d.Capabilities[0].ID != "close@ticket" {
		t.Fatalf("capabilities %v, want close@ticket listed (rows t1 and t3 are open)", capIDs(d))
	}
	if _, res := e.invoke("close@ticket", map[string]any{"record": "t2"}); res.Error == nil || res.Error.Code != string(perr.ActionUnavailable) || res.Error.Message != "already closed" {
		t.Errorf("invoke on the closed row: %+v, want ACTION_UNAVAILABLE already closed", res.Error)
	}
	for _, id := range []string{"t1", "t3"} {
		if _, res := e.invoke("close@ticket", map[string]any{"record": id}); res.Error != nil {
			t.Errorf("invoke on open row %s: %+v", id, res.Error)
		}
	}
	d = e.describe("")
	if len(d.Capabilities) != 0 {
		t.Errorf("capabilities %v, want none once every row is closed", capIDs(d))
	}
	if u := unavailableByID(d, "close@ticket"); u == nil || u.Reason != "already closed" {
		t.Errorf("unavailable %+v, want close@ticket: already closed", d.Context.Unavailable)
	}
}

// TestRowAvailabilityCount: describe says on how many rows in view a
// row action with an availability check can run ("available for N of the
// M rows in view"), asking at most the first 200 rows in view; an action
// without a check gives no count.
func TestRowAvailabilityCount(t *testing.T) {
	rows := func(n, from, to int) func(context.Context) ([]RecordItem, error) {
		return func(context.Context) ([]RecordItem, error) {
			out := make([]RecordItem, n)
			for i := range out {
				out[i] = RecordItem{ID: fmt.Sprintf("t%d", i), Offscreen: i < from || i >= to}
			}
			return out, nil
		}
	}
	even := func(id string) bool { n, _ := strconv.Atoi(id[1:]); return n%2 == 0 }
	perRow := func(open func(id string) bool) func(context.Context, string) Availability {
		return func(_ context.Context, id string) Availability {
			if id == "" {
				panic("byId(undefined)")
			}
			if open(id) {
				return Available
			}
			return Unavailable("already closed")
		}
	}
	count := func(n int) *int { return &n }
	for _, tc := range []struct {
		name           string
		rows, from, to int
		available      func(context.Context, string) Availability
		want           *int
		wantRowsShown  string
	}{
		{"per row: 2 of 3", 3, 0, 3, perRow(even), count(2), "available for 2 of the 3 rows in view"},
		{"offscreen rows do not count", 4, 0, 2, perRow(even), count(1), "available for 1 of the 2 rows in view"},
		{"the first 200 of 250", 250, 0, 250, perRow(func(string) bool { return true }), count(200), "available for 200 of the first 200 rows in view"},
		{"rows in view past the first 200 known", 300, 250, 275, perRow(even), count(13), "available for 13 of the 25 rows in view"},
		{"yes without a row, asked row by row", 3, 0, 3, func(_ context.Context, id string) Availability {
			return Availability{OK: id == "" || even(id), Reason: "already closed"}
		}, count(2), "available for 2 of the 3 rows in view"},
		{"no check", 3, 0, 3, nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if _, err := e.rt.DeclareRecords(Records{Kind: "ticket", Read: rows(tc.rows, tc.from, tc.to)}); err != nil {
				t.Fatal(err)
			}
			mustDeclare(t, e.rt, Action{ID: "close", Title: "Close", Record: &RecordRef{Kind: "ticket", AllowOffscreen: true}, Available: tc.available,
				Run: func(context.Context, *Call) (any, error) { return true, nil }})
			d := e.describe("")
			if len(d.Capabilities) != 1 || d.Capabilities[0].Record == nil {
				t.Fatalf("capabilities %v, want close@ticket with its record template", capIDs(d))
			}
			r := d.Capabilities[0].Record
			if !cmp.Equal(r.Available, tc.want) || r.RowsAvailable() != tc.wantRowsShown {
				t.Errorf("record available %v (%q); want %v (%q)", countText(r.Available), r.RowsAvailable(), countText(tc.want), tc.wantRowsShown)
			}
		})
	}
}

func countText(n *int) string {
	if n == nil {
		return "absent"
	}
	return strconv.Itoa(*n)
}
