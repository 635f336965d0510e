package wire

import (
	"github.com/pling-go/pling/schema"

	"encoding/json"
	"math"
	"testing"

	"github.com/pling-go/pling/internal/jsonvalue"
)

// TestAppendInvokeResult checks the generated encoder against schema.Encode on
// results that use every field, each omitempty edge and any-typed values
// of every kind.
func TestAppendInvokeResult(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	var nilPoint *point
	anys := []any{nil, "a<b>&\u2028\"", true, false, json.Number("1.50"), 3.25, 1e21, math.Copysign(0, -1), 42, []any{1, "x", nil},
		map[string]any{"b": 1, "a": map[string]any{"z": []any{}}}, point{7}, nilPoint, jsonvalue.Compact(`{"k":[1,2]}`), []string(nil), map[string]any{}}
	var cases []schema.SurfaceInvokeResult
	cases = append(cases, schema.SurfaceInvokeResult{}, schema.SurfaceInvokeResult{Value: "ok"})
	for _, v := range anys {
		cases = append(cases,
			schema.SurfaceInvokeResult{Value: v, Evidence: &schema.Evidence{Capability: "cart.add"}},
			schema.SurfaceInvokeResult{Evidence: &schema.Evidence{Capability: "c", Record: "r<1>", Records: []string{"a", "b"},
				Expectations: []schema.ExpectationResult{{State: "cart.count", Condition: "increases", Before: v, After: v, Met: true}, {State: "s", Condition: "c"}},
				Steps:        3, Handoff: "done", Approval: "approved", Summary: "cart.add ran"}},
			schema.SurfaceInvokeResult{Error: &schema.ActionFailure{Code: "EXPECTATION_FAILED", Message: "m\n", Details: map[string]any{"v": v}, Resume: "rt"}},
			schema.SurfaceInvokeResult{Observation: &schema.SurfaceObservation{States: map[string]schema.StateChange{"b": {Before: v, After: 1}, "a": {}},
				Feedback: []schema.Feedback{{Level: "info", Message: "saved & done"}}, Navigation: &schema.Navigation{From: "/a", To: "/b"},
				CapabilitiesChanged: true, Revision: "sha256:x", Truncated: true}},
		)
	}
	cases = append(cases,
		schema.SurfaceInvokeResult{Error: &schema.ActionFailure{Code: "X", Message: ""}, Observation: &schema.SurfaceObservation{Revision: "r"}},
		schema.SurfaceInvokeResult{Observation: &schema.SurfaceObservation{Navigation: &schema.Navigation{}, States: map[string]schema.StateChange{}, Feedback: []schema.Feedback{}}},
		schema.SurfaceInvokeResult{Observation: &schema.SurfaceObservation{Navigation: &schema.Navigation{To: "/b"}}},
		schema.SurfaceInvokeResult{Observation: &schema.SurfaceObservation{Navigation: &schema.Navigation{From: "/a"}}},
		schema.SurfaceInvokeResult{Evidence: &schema.Evidence{Records: []string{}, Expectations: []schema.ExpectationResult{}}},
	)
	appendsAsEncode(t, "AppendInvokeResult", cases, AppendInvokeResult)
	// A value schema.Encode cannot write is an error here too.
	bad := schema.SurfaceInvokeResult{Value: map[string]any{"f": func() {}}}
	if _, err := AppendInvokeResult(nil, &bad); err == nil {
		t.Error("a func value encoded")
	}
}
