package runtime

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
)

// A folded invoke names its record by id or by the label people read
// (whole or its first word); an id wins, an ambiguous label is refused
// with its candidates, and the call runs on the row's id.
func TestInvokeRecordByLabel(t *testing.T) {
	e := newEnv(t)
	if _, err := e.rt.DeclareRecords(Records{Kind: "ticket", Read: func(context.Context) ([]RecordItem, error) {
		return []RecordItem{
			{ID: "t1", Label: "T-0847 Printer jams"},
			{ID: "t2", Label: "T-0848 VPN down"},
			{ID: "t3", Label: "Dup same"},
			{ID: "t4", Label: "Dup same"},
			{ID: "T-0848", Label: "an id that looks like a label"},
			{ID: "t6", Label: "T-0900 far away", Offscreen: true},
		}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	var ran []string
	mustDeclare(t, e.rt, Action{ID: "close", Title: "Close ticket", Record: &RecordRef{Kind: "ticket"},
		Run: func(_ context.Context, c *Call) (any, error) { ran = append(ran, c.Record); return nil, nil }})

	tests := []struct {
		name    string
		record  string
		outcome string
		ran     string
	}{
		{"by id", "t2", "ok", "t2"},
		{"by the label's first word", "T-0847", "ok", "t1"},
		{"by the whole label", "T-0847 Printer jams", "ok", "t1"},
		{"an id wins over a label", "T-0848", "ok", "T-0848"},
		{"an ambiguous label", "Dup same", string(perr.InvalidParams), ""},
		{"by the whole label in another case", "t-0847 printer JAMS", "ok", "t1"},
		{"by the first word in another case", "t-0847", "ok", "t1"},
		{"an ambiguous label in another case", "dup SAME", string(perr.InvalidParams), ""},
		{"an unknown label", "T-9999", string(perr.ActionNotFound), ""},
		{"a label of an offscreen row keeps the offscreen rule", "T-0900", string(perr.ActionUnavailable), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran = nil
			resp, _ := e.invoke("close@ticket", map[string]any{"record": tt.record})
			if got := outcome(t, resp); got != tt.outcome {
				t.Fatalf("outcome %s, want %s", got, tt.outcome)
			}
			var want []string
			if tt.ran != "" {
				want = []string{tt.ran}
			}
			if diff := cmp.Diff(want, ran); diff != "" {
				t.Errorf("ran (-want +got):\n%s", diff)
			}
		})
	}
}
