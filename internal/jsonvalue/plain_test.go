package jsonvalue

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type plainPoint struct {
	X int    `json:"x"`
	N string `json:"n,omitempty"`
}

func TestPlain(t *testing.T) {
	m := map[string]any{"a": 1}
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"a string as itself", "é", "é"},
		{"a json.Number as itself", json.Number("1.50"), json.Number("1.50")},
		{"a float64 as itself", 2.5, 2.5},
		{"a plain map as itself, its elements not visited", m, m},
		{"an int as a json.Number", 7, json.Number("7")},
		{"a struct through its JSON tags", plainPoint{X: 1}, map[string]any{"x": json.Number("1")}},
		{"a typed map", map[string]int{"b": 2}, map[string]any{"b": json.Number("2")}},
		{"a slice of strings", []string{"b", "a"}, []any{"b", "a"}},
		{"a RawMessage with a duplicate key: the last wins", json.RawMessage(`{"a":1,"a":2}`), map[string]any{"a": json.Number("2")}},
		{"a nil typed map is null", map[string]int(nil), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Plain(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Plain (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlainErrors(t *testing.T) {
	for name, in := range map[string]any{
		"a channel":                     make(chan int),
		"a function":                    func() {},
		"an invalid json.Number inside": map[string]json.Number{"a": "abc"},
	} {
		t.Run(name, func(t *testing.T) {
			if v, err := Plain(in); err == nil {
				t.Errorf("Plain = %v, want an error", v)
			}
		})
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"numbers keep their text", `[1.0,2e3]`, []any{json.Number("1.0"), json.Number("2e3")}},
		{"a duplicate key: the last wins", `{"a":1,"a":"x"}`, map[string]any{"a": "x"}},
		{"escapes decoded", `"\u00e9\n"`, "é\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PlainText([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PlainText (-want +got):\n%s", diff)
			}
		})
	}
	if v, err := PlainText([]byte(`{"a":`)); err == nil {
		t.Errorf("PlainText(truncated) = %v, want an error", v)
	}
}
