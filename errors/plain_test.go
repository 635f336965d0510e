package errors_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/jsonvalue"
)

type plainNote struct {
	A int      `json:"a"`
	B []string `json:"b,omitempty"`
}

// The errors package cannot import schema (schema imports it), so it keeps
// its own encoding/json step to plain JSON; it must give what jsonvalue.Plain,
// the one normaliser everything else uses, gives.
func TestRedactValueIsPlainAsSchemaPlain(t *testing.T) {
	tests := map[string]any{
		"an int":                            7,
		"a float":                           2.5,
		"a json.Number":                     json.Number("1.50"),
		"a struct":                          plainNote{A: 1, B: []string{"x"}},
		"a typed map":                       map[string]int{"b": 2, "a": 1},
		"a nested plain map":                map[string]any{"n": map[string]any{"k": []any{1, "s", nil, true}}},
		"a RawMessage with a duplicate key": json.RawMessage(`{"a":1,"a":2}`),
		"a slice of structs":                []plainNote{{A: 1}, {A: 2}},
		"a nil typed map":                   map[string]int(nil),
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			want, err := jsonvalue.Plain(v)
			if err != nil {
				t.Fatal(err)
			}
			// jsonvalue.Plain keeps a plain map or slice as it is; encode both
			// sides to compare numbers by their text.
			wb, _ := json.Marshal(want)
			gb, _ := json.Marshal(errors.RedactValue("note", v))
			if diff := cmp.Diff(string(wb), string(gb)); diff != "" {
				t.Errorf("RedactValue vs jsonvalue.Plain (-want +got):\n%s", diff)
			}
		})
	}
}
