// Package jsontrees is test support for JSON value trees: a table of them with the
// bytes each of Pling's two JSON spellings writes for them, encoding/json's
// (schema.Encode and schema.AppendValue) and RFC 8785's (canonical JSON,
// runtime/internal/canon). Both writers walk the trees with one walker, so
// one table pins them both, with the edge cases RFC 8785 cares about: key
// order by UTF-16 code units, -0, the exponent bounds of number
// formatting, integers beyond 2^53, U+2028 and U+2029, controls and
// invalid UTF-8. Product code must not import it.
package jsontrees

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A Tree is a value and its bytes in each spelling.
type Tree struct {
	Name  string
	Value any
	// Go is what encoding/json writes without HTML escapes.
	Go string
	// Canonical is the RFC 8785 form.
	Canonical string
}

type point struct {
	Y int    `json:"y"`
	X int    `json:"x"`
	N string `json:"n,omitempty"`
}

// Trees is the table.
var Trees = []Tree{
	{"null", nil, `null`, `null`},
	{"booleans", []any{true, false}, `[true,false]`, `[true,false]`},
	{"empty containers", map[string]any{"o": map[string]any{}, "a": []any{}}, `{"a":[],"o":{}}`, `{"a":[],"o":{}}`},
	// encoding/json writes a nil map or slice as null; canonical JSON,
	// which has no nil containers, as the empty one.
	{"nil map", map[string]any(nil), `null`, `{}`},
	{"nil slice", []any(nil), `null`, `[]`},
	{"nil containers nested", map[string]any{"m": map[string]any(nil), "s": []any(nil)}, `{"m":null,"s":null}`, `{"m":{},"s":[]}`},
	{"deep nesting", []any{[]any{[]any{map[string]any{"x": []any{map[string]any{}}}}}}, `[[[{"x":[{}]}]]]`, `[[[{"x":[{}]}]]]`},
	// U+1F600 is the surrogate pair D83D DE00: before U+E000 in UTF-16
	// order, after it in byte (code point) order.
	{"keys beyond the BMP", map[string]any{"\U0001F600": 1.0, "\uE000": 2.0, "a": 3.0, "é": 4.0, "": 5.0, "B": 6.0},
		`{"":5,"B":6,"a":3,"é":4,"` + "\uE000" + `":2,"😀":1}`,
		`{"":5,"B":6,"a":3,"é":4,"😀":1,"` + "\uE000" + `":2}`},
	{"keys with escapes", map[string]any{"\n": true, "<": false, "\u2028": nil},
		`{"\n":true,"<":false,"\u2028":null}`,
		`{"\n":true,"<":false,"` + "\u2028" + `":null}`},
	{"html characters", "<a&b>", `"<a&b>"`, `"<a&b>"`},
	{"U+2028 and U+2029", "\u2028\u2029", `"\u2028\u2029"`, "\"\u2028\u2029\""},
	{"controls", "\x01\x1f\x7f\b\f\n\r\t\"\\", `"\u0001\u001f` + "\x7f" + `\b\f\n\r\t\"\\"`, `"\u0001\u001f` + "\x7f" + `\b\f\n\r\t\"\\"`},
	{"invalid UTF-8", "a\xffb", `"a\ufffdb"`, "\"a\uFFFDb\""},
	{"characters beyond the BMP", "é😀日", `"é😀日"`, `"é😀日"`},
	{"json.Number as spelled", []any{json.Number("1.50"), json.Number("-0"), json.Number("1e21"), json.Number("1E-7")},
		`[1.50,-0,1e21,1E-7]`, `[1.5,0,1e+21,1e-7]`},
	{"integer beyond 2^53", json.Number("9007199254740993"), `9007199254740993`, `9007199254740992`},
	{"float64 exponent bounds", []any{1e20, 1e21, 1e-6, 1e-7, 5e-324, math.MaxFloat64},
		`[100000000000000000000,1e+21,0.000001,1e-7,5e-324,1.7976931348623157e+308]`,
		`[100000000000000000000,1e+21,0.000001,1e-7,5e-324,1.7976931348623157e+308]`},
	{"float64 digits", []any{0.1, 333333333.3333332, 1424953923781206.2, 9.999999999999997e+22},
		`[0.1,333333333.3333332,1424953923781206.2,9.999999999999997e+22]`,
		`[0.1,333333333.3333332,1424953923781206.2,9.999999999999997e+22]`},
	{"float64 -0", math.Copysign(0, -1), `-0`, `0`},
	{"Go values", map[string]any{"p": point{Y: 2, X: 1}, "m": map[string]int{"b": 1, "a": 2}, "i": 7, "s": []string{"b", "a"}},
		`{"i":7,"m":{"a":2,"b":1},"p":{"y":2,"x":1},"s":["b","a"]}`,
		`{"i":7,"m":{"a":2,"b":1},"p":{"x":1,"y":2},"s":["b","a"]}`},
	{"RawMessage", json.RawMessage(`{"b":1.0,"a":[2]}`), `{"b":1.0,"a":[2]}`, `{"a":[2],"b":1}`},
}

// Check writes each tree of the table with write and wants its pinned
// bytes: Canonical with canonical, else Go.
func Check(t *testing.T, canonical bool, write func(v any) ([]byte, error)) {
	t.Helper()
	for _, tt := range Trees {
		t.Run(tt.Name, func(t *testing.T) {
			got, err := write(tt.Value)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.Go
			if canonical {
				want = tt.Canonical
			}
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// RoundTrip returns v as encoding/json writes it and reads it back into an
// any (numbers as float64, structs as maps), so that values built in
// different ways compare alike; a failure either way fails t.
func RoundTrip(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
