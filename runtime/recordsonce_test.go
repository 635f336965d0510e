package runtime

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// declareOrders declares an order page as a data-heavy dashboard does: a
// records reader that builds n rows from the page's data each time it
// runs (counted in reads), and five row actions of the kind, each with an
// availability check written per row.
func declareOrders(t testing.TB, rt *Runtime, n int, reads *atomic.Int64) {
	t.Helper()
	status := make(map[string]string, n)
	for i := range n {
		status[fmt.Sprintf("ord_%d", i+1)] = []string{"pending", "paid", "shipped"}[i%3]
	}
	if _, err := rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) {
		reads.Add(1)
		out := make([]RecordItem, 0, n)
		for i := range n {
			out = append(out, RecordItem{ID: fmt.Sprintf("ord_%d", i+1), Label: fmt.Sprintf("#%d", 1001+i), Offscreen: i >= 50})
		}
		return out, nil
	}}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct{ id, from string }{{"pay", "pending"}, {"ship", "paid"}, {"deliver", "shipped"}, {"cancel", "pending"}, {"refund", "paid"}} {
		mustDeclare(t, rt, Action{ID: a.id, Title: a.id, Record: &RecordRef{Kind: "order"},
			Available: func(_ context.Context, id string) Availability {
				if id == "" || status[id] != a.from {
					return Unavailable("not " + a.from)
				}
				return Available
			},
			Run: func(context.Context, *Call) (any, error) { return nil, nil }})
	}
}

// TestRecordsReadOncePerDescribe: on a page with thousands of rows and
// five row actions of their kind, each describe runs the records reader
// once, however many row actions ask for the rows (their availability,
// their record templates) and the context lists them; so do the model
// tools and the author's lint.
func TestRecordsReadOncePerDescribe(t *testing.T) {
	for _, n := range []int{2000, 10000} {
		t.Run(fmt.Sprintf("rows=%d", n), func(t *testing.T) {
			var reads atomic.Int64
			e := newEnv(t)
			declareOrders(t, e.rt, n, &reads)
			for i := range 3 {
				before := reads.Load()
				d := e.describe("")
				if got := reads.Load() - before; got != 1 {
					t.Errorf("describe %d ran the records reader %d times, want 1", i+1, got)
				}
				if len(d.Capabilities) != 5 || d.Context.Records["order"].Total != n {
					t.Fatalf("describe %d: capabilities %v, %d orders; want 5 row actions over %d", i+1, capIDs(d), d.Context.Records["order"].Total, n)
				}
			}
			before := reads.Load()
			if _, err := e.rt.tools(context.Background(), ""); err != nil {
				t.Fatal(err)
			}
			if got := reads.Load() - before; got != 1 {
				t.Errorf("Tools ran the records reader %d times, want 1", got)
			}
			before = reads.Load()
			e.rt.lint(context.Background())
			if got := reads.Load() - before; got != 1 {
				t.Errorf("lint ran the records reader %d times, want 1", got)
			}
		})
	}
}
