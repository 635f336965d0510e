package runtime

import (
	"context"
	"sync"
	"testing"

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
