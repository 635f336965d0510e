package jsontree

import (
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
