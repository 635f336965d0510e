package jsontree

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMap(t *testing.T) {
	double := func(v any) any {
		if f, ok := v.(float64); ok {
			return 2 * f
		}
		return v
	}
	tests := []struct {
		name string
		in   any
		leaf func(any) any
		want any
	}{
		{"scalar kept", "x", nil, "x"},
		{"nil kept", nil, nil, nil},
		{"scalar mapped", 2.0, double, 4.0},
		{"nested mapped", map[string]any{"a": []any{1.0, "s", map[string]any{"b": 3.0}}}, double,
			map[string]any{"a": []any{2.0, "s", map[string]any{"b": 6.0}}}},
		{"empty containers", map[string]any{"o": map[string]any{}, "a": []any{}}, nil,
			map[string]any{"o": map[string]any{}, "a": []any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Map(tt.in, tt.leaf)); diff != "" {
				t.Errorf("Map (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMapCopies: writing into the copy leaves the original as it was.
func TestMapCopies(t *testing.T) {
	in := map[string]any{"o": map[string]any{"k": "v"}, "a": []any{"x"}}
	out := Map(in, nil).(map[string]any)
	out["o"].(map[string]any)["k"] = "changed"
	out["a"].([]any)[0] = "changed"
	out["new"] = true
	want := map[string]any{"o": map[string]any{"k": "v"}, "a": []any{"x"}}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("the original changed (-want +got):\n%s", diff)
	}
}

// TestNumber: every Go number kind reads as its value; nothing else is a
// number, nor is a json.Number that does not parse.
func TestNumber(t *testing.T) {
	for _, v := range []any{json.Number("6"), 6.0, 6, int8(6), int32(6), int64(6), uint(6), uint8(6), uint64(6), float32(6)} {
		if got, ok := Number(v); !ok || got != 6 {
			t.Errorf("Number(%T %v) = %v, %v; want 6, true", v, v, got, ok)
		}
	}
	for _, v := range []any{json.Number("x"), nil, "6", true, map[string]any{"n": 6.0}, []any{6.0}, struct{}{}} {
		if got, ok := Number(v); ok {
			t.Errorf("Number(%T %v) = %v, true; want false", v, v, got)
		}
	}
}
