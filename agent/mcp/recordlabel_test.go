package mcp_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/runtime"
)

// A record named by its label in another case ("lemon risotto" for
// "Lemon risotto") is the record, as a person means it.
func TestRecordLabelInAnyCase(t *testing.T) {
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	if _, err := rt.DeclareRecords(runtime.Records{Kind: "dish", Read: func(context.Context) ([]runtime.RecordItem, error) {
		return []runtime.RecordItem{{ID: "d1", Label: "Lemon risotto"}, {ID: "d2", Label: "Mushroom soup"}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	var ran []string
	if _, err := rt.DeclareAction(runtime.Action{ID: "order", Title: "Order a dish", Record: &runtime.RecordRef{Kind: "dish"},
		Run: func(_ context.Context, c *runtime.Call) (any, error) { ran = append(ran, c.Record); return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	s := connectRuntime(t, rt)
	for _, label := range []string{"lemon risotto", "MUSHROOM"} {
		res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "order__dish", Arguments: map[string]any{"record": label}})
		if err != nil || res.IsError {
			t.Errorf("order__dish %q: %v %+v", label, err, res)
		}
	}
	if diff := cmp.Diff([]string{"d1", "d2"}, ran); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
}
