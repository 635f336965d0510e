package schema

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/pling-go/pling/internal/jsonvalue"
)

// TestAppendInvokeResult checks the generated encoder against Encode on
// results that use every field, each omitempty edge and any-typed values
// of every kind.
func TestAppendInvokeResult(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	var nilPoint *point
	anys := []any{nil, "a<b>&\u2028\"", true, false, json.Number("1.50"), 3.25, 1e21, math.Copysign(0, -1), 42, []any{1, "x", nil},
		map[string]any{"b": 1, "a": map[string]any{"z": []any{}}}, point{7}, nilPoint, jsonvalue.Compact(`{"k":[1,2]}`), []string(nil), map[string]any{}}
	var cases []SurfaceInvokeResult
	cases = append(cases, SurfaceInvokeResult{}, SurfaceInvokeResult{Value: "ok"})
	for _, v := range anys {
		cases = append(cases,
			SurfaceInvokeResult{Value: v, Evidence: &Evidence{Capability: "cart.add"}},
			SurfaceInvokeResult{Evidence: &Evidence{Capability: "c", Record: "r<1>", Records: []string{"a", "b"},
				Expectations: []ExpectationResult{{State: "cart.count", Condition: "increases", Before: v, After: v, Met: true}, {State: "s", Condition: "c"}},
				Steps:        3, Handoff: "done", Approval: "approved", Summary: "cart.add ran"}},
			SurfaceInvokeResult{Error: &ActionFailure{Code: "EXPECTATION_FAILED", Message: "m\n", Details: map[string]any{"v": v}, Resume: "rt"}},
			SurfaceInvokeResult{Observation: &SurfaceObservation{States: map[string]StateChange{"b": {Before: v, After: 1}, "a": {}},
				Feedback: []Feedback{{Level: "info", Message: "saved & done"}}, Navigation: &Navigation{From: "/a", To: "/b"},
				CapabilitiesChanged: true, Revision: "sha256:x", Truncated: true}},
		)
	}
	cases = append(cases,
		SurfaceInvokeResult{Error: &ActionFailure{Code: "X", Message: ""}, Observation: &SurfaceObservation{Revision: "r"}},
		SurfaceInvokeResult{Observation: &SurfaceObservation{Navigation: &Navigation{}, States: map[string]StateChange{}, Feedback: []Feedback{}}},
		SurfaceInvokeResult{Observation: &SurfaceObservation{Navigation: &Navigation{To: "/b"}}},
		SurfaceInvokeResult{Observation: &SurfaceObservation{Navigation: &Navigation{From: "/a"}}},
		SurfaceInvokeResult{Evidence: &Evidence{Records: []string{}, Expectations: []ExpectationResult{}}},
	)
	appendsAsEncode(t, "AppendInvokeResult", cases, AppendInvokeResult)
	// A value Encode cannot write is an error here too.
	bad := SurfaceInvokeResult{Value: map[string]any{"f": func() {}}}
	if _, err := AppendInvokeResult(nil, &bad); err == nil {
		t.Error("a func value encoded")
	}
}
