package runtime

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type paramsCase struct {
	name   string
	params map[string]Param
	input  map[string]any
	want   []violation
	out    map[string]any // nil: the input itself
}

func v(path, reason string) violation { return violation{Path: path, Reason: reason} }

func paramsCases() []paramsCase {
	str := map[string]Param{"s": {Type: "string"}}
	num := map[string]Param{"n": {Type: "number"}}
	integer := map[string]Param{"n": {Type: "integer"}}
	return []paramsCase{
		// Types.
		{"string ok", str, map[string]any{"s": "x"}, nil, nil},
		{"string given a number", str, map[string]any{"s": json.Number("1")}, []violation{v("/s", "must be a string")}, nil},
		{"string given null", str, map[string]any{"s": nil}, []violation{v("/s", "must be a string")}, nil},
		{"number ok (json.Number)", num, map[string]any{"n": json.Number("1.5")}, nil, nil},
		{"number ok (float64)", num, map[string]any{"n": 1.5}, nil, nil},
		{"number ok (int)", num, map[string]any{"n": 3}, nil, nil},
		{"number given a string", num, map[string]any{"n": "1"}, []violation{v("/n", "must be a number")}, nil},
		{"number given a bool", num, map[string]any{"n": true}, []violation{v("/n", "must be a number")}, nil},
		{"number out of float range", num, map[string]any{"n": json.Number("1e400")}, []violation{v("/n", "must be a number")}, nil},
		{"integer ok", integer, map[string]any{"n": json.Number("2")}, nil, nil},
		{"integer 2.0 is an integer", integer, map[string]any{"n": json.Number("2.0")}, nil, nil},
		{"integer 1e2 is an integer", integer, map[string]any{"n": json.Number("1e2")}, nil, nil},
		{"integer -0 is an integer", integer, map[string]any{"n": json.Number("-0")}, nil, nil},
		{"integer given 1.5", integer, map[string]any{"n": json.Number("1.5")}, []violation{v("/n", "must be an integer")}, nil},
		{"integer given float64 1.5", integer, map[string]any{"n": 1.5}, []violation{v("/n", "must be an integer")}, nil},
		{"integer given a string", integer, map[string]any{"n": "2"}, []violation{v("/n", "must be a number")}, nil},
		{"boolean ok", map[string]Param{"b": {Type: "boolean"}}, map[string]any{"b": false}, nil, nil},
		{"boolean given a string", map[string]Param{"b": {Type: "boolean"}}, map[string]any{"b": "true"}, []violation{v("/b", "must be a boolean")}, nil},
		{"object ok", map[string]Param{"o": {Type: "object"}}, map[string]any{"o": map[string]any{"a": 1}}, nil, nil},
		{"object given an array", map[string]Param{"o": {Type: "object"}}, map[string]any{"o": []any{}}, []violation{v("/o", "must be an object")}, nil},
		{"array ok", map[string]Param{"a": {Type: "array"}}, map[string]any{"a": []any{1, "x"}}, nil, nil},
		{"array given an object", map[string]Param{"a": {Type: "array"}}, map[string]any{"a": map[string]any{}}, []violation{v("/a", "must be an array")}, nil},
		{"untyped accepts anything", map[string]Param{"x": {}}, map[string]any{"x": []any{nil, map[string]any{}}}, nil, nil},
		{"untyped accepts null", map[string]Param{"x": {}}, map[string]any{"x": nil}, nil, nil},

		// Enum: canonical JSON equality.
		{"enum 1 matches 1.0", map[string]Param{"n": {Type: "number", Enum: []any{1, 2}}}, map[string]any{"n": json.Number("1.0")}, nil, nil},
		{"enum 1.0 matches 1", map[string]Param{"n": {Type: "number", Enum: []any{1.0}}}, map[string]any{"n": json.Number("1")}, nil, nil},
		{"enum 1e0 matches 1", map[string]Param{"n": {Enum: []any{json.Number("1")}}}, map[string]any{"n": json.Number("1e0")}, nil, nil},
		{"enum miss", map[string]Param{"n": {Type: "number", Enum: []any{1, 2}}}, map[string]any{"n": json.Number("3")},
			[]violation{v("/n", "must be one of the allowed values")}, nil},
		{"enum string is not a number", map[string]Param{"n": {Enum: []any{1}}}, map[string]any{"n": "1"},
			[]violation{v("/n", "must be one of the allowed values")}, nil},
		{"enum of objects ignores key order", map[string]Param{"o": {Enum: []any{map[string]any{"a": 1, "b": 2}}}},
			map[string]any{"o": map[string]any{"b": json.Number("2"), "a": json.Number("1.0")}}, nil, nil},
		{"enum of strings", map[string]Param{"c": {Type: "string", Enum: []any{"red", "green"}}}, map[string]any{"c": "blue"},
			[]violation{v("/c", "must be one of the allowed values")}, nil},

		// Bounds.
		{"minimum inclusive", map[string]Param{"n": {Type: "integer", Minimum: ptrF(1)}}, map[string]any{"n": json.Number("1")}, nil, nil},
		{"below minimum", map[string]Param{"n": {Type: "integer", Minimum: ptrF(1)}}, map[string]any{"n": json.Number("0")},
			[]violation{v("/n", "must be at least 1")}, nil},
		{"above maximum", map[string]Param{"n": {Type: "number", Maximum: ptrF(2.5)}}, map[string]any{"n": json.Number("2.51")},
			[]violation{v("/n", "must be at most 2.5")}, nil},
		{"maximum inclusive", map[string]Param{"n": {Type: "number", Maximum: ptrF(2.5)}}, map[string]any{"n": json.Number("2.5")}, nil, nil},
		{"minLength in characters, not bytes", map[string]Param{"s": {Type: "string", MinLength: ptrI(3)}}, map[string]any{"s": "日本"},
			[]violation{v("/s", "must be at least 3 characters")}, nil},
		{"maxLength in characters, not bytes", map[string]Param{"s": {Type: "string", MaxLength: ptrI(2)}}, map[string]any{"s": "日本"}, nil, nil},
		{"maxLength counts an emoji as one", map[string]Param{"s": {Type: "string", MaxLength: ptrI(1)}}, map[string]any{"s": "😀"}, nil, nil},
		{"over maxLength", map[string]Param{"s": {Type: "string", MaxLength: ptrI(2)}}, map[string]any{"s": "abc"},
			[]violation{v("/s", "must be at most 2 characters")}, nil},

		// Pattern: ECMAScript (u flag), unanchored (JSON Schema semantics).
		{"pattern is a search", map[string]Param{"s": {Type: "string", Pattern: "[0-9]+"}}, map[string]any{"s": "abc123def"}, nil, nil},
		{"pattern miss", map[string]Param{"s": {Type: "string", Pattern: "[0-9]+"}}, map[string]any{"s": "abc"},
			[]violation{v("/s", `does not match the pattern "[0-9]+"`)}, nil},
		{"anchored pattern", map[string]Param{"s": {Type: "string", Pattern: "^A[0-9]$"}}, map[string]any{"s": "xA1"},
			[]violation{v("/s", `does not match the pattern "^A[0-9]$"`)}, nil},
		{"anchored pattern ok", map[string]Param{"s": {Type: "string", Pattern: "^A[0-9]$"}}, map[string]any{"s": "A1"}, nil, nil},

		// Arrays.
		{"items checked with their index", map[string]Param{"tags": {Type: "array", Items: &Param{Type: "string"}}},
			map[string]any{"tags": []any{"a", json.Number("1"), "c", true}},
			[]violation{v("/tags/1", "must be a string"), v("/tags/3", "must be a string")}, nil},
		{"nested items", map[string]Param{"m": {Type: "array", Items: &Param{Type: "array", Items: &Param{Type: "integer"}}}},
			map[string]any{"m": []any{[]any{json.Number("1")}, []any{json.Number("2"), json.Number("2.5")}}},
			[]violation{v("/m/1/1", "must be an integer")}, nil},
		{"minItems", map[string]Param{"a": {Type: "array", MinItems: ptrI(2)}}, map[string]any{"a": []any{1}},
			[]violation{v("/a", "must have at least 2 items")}, nil},
		{"maxItems", map[string]Param{"a": {Type: "array", MaxItems: ptrI(1)}}, map[string]any{"a": []any{1, 2}},
			[]violation{v("/a", "must have at most 1 items")}, nil},
		{"empty array within bounds", map[string]Param{"a": {Type: "array", MaxItems: ptrI(1)}}, map[string]any{"a": []any{}}, nil, nil},

		// Unknown, required, defaults.
		{"unknown param", map[string]Param{"s": {}}, map[string]any{"s": 1, "x": 2}, []violation{v("/x", "unknown parameter")},
			map[string]any{"s": 1}},
		{"no params at all", nil, map[string]any{"x": 1}, []violation{v("/x", "unknown parameter")}, map[string]any{}},
		{"required missing", map[string]Param{"sku": {Type: "string", Required: true}}, map[string]any{},
			[]violation{v("/sku", "is required")}, map[string]any{}},
		{"required present as null is a type error", map[string]Param{"sku": {Type: "string", Required: true}}, map[string]any{"sku": nil},
			[]violation{v("/sku", "must be a string")}, nil},
		{"nil input", map[string]Param{"q": {Type: "integer", Default: 1}}, nil, nil, map[string]any{"q": 1}},
		{"default applied", map[string]Param{"qty": {Type: "integer", Default: 1}, "sku": {Type: "string"}}, map[string]any{"sku": "A"},
			nil, map[string]any{"qty": 1, "sku": "A"}},
		{"default not applied over a value", map[string]Param{"qty": {Type: "integer", Default: 1}}, map[string]any{"qty": json.Number("3")},
			nil, nil},
		{"required with a default still required", map[string]Param{"qty": {Type: "integer", Required: true, Default: 1}}, map[string]any{},
			[]violation{v("/qty", "is required")}, map[string]any{}},

		// Many violations, sorted by path; several for one path keep their order.
		{"violations sorted by path", map[string]Param{
			"b": {Type: "string", MinLength: ptrI(5), Pattern: "^[0-9]+$"},
			"a": {Type: "integer", Required: true},
			"c": {Type: "array", MaxItems: ptrI(1), Items: &Param{Type: "boolean"}},
		}, map[string]any{"b": "xy", "c": []any{1, true}, "zz": 0, "_": 1},
			[]violation{
				v("/_", "unknown parameter"),
				v("/a", "is required"),
				v("/b", "must be at least 5 characters"), v("/b", `does not match the pattern "^[0-9]+$"`),
				v("/c", "must have at most 1 items"), v("/c/0", "must be a boolean"),
				v("/zz", "unknown parameter"),
			}, map[string]any{"b": "xy", "c": []any{1, true}}},

		// JSON Pointer escaping (RFC 6901): ~ → ~0, / → ~1.
		{"slash and tilde in an unknown key", map[string]Param{}, map[string]any{"a/b": 1, "m~n": 2, "~1": 3},
			[]violation{v("/a~1b", "unknown parameter"), v("/m~0n", "unknown parameter"), v("/~01", "unknown parameter")}, map[string]any{}},
	}
}

func TestValidateInput(t *testing.T) {
	for _, tt := range paramsCases() {
		t.Run(tt.name, func(t *testing.T) {
			out, vs := validateInput(tt.params, tt.input)
			if diff := cmp.Diff(tt.want, vs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			want := tt.out
			if want == nil {
				want = tt.input
			}
			if diff := cmp.Diff(want, out, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("validated input (-want +got):\n%s", diff)
			}
		})
	}
}

// Array items stop being checked at maxViolations.
func TestValidateInputBoundsViolations(t *testing.T) {
	a := make([]any, 100)
	for i := range a {
		a[i] = i
	}
	_, vs := validateInput(map[string]Param{"a": {Type: "array", Items: &Param{Type: "string"}}}, map[string]any{"a": a})
	if len(vs) != maxViolations {
		t.Errorf("%d violations, want %d", len(vs), maxViolations)
	}
}

func TestPointer(t *testing.T) {
	tests := []struct{ key, want string }{
		{"a", "/a"}, {"", "/"}, {"a/b", "/a~1b"}, {"a~b", "/a~0b"}, {"~/", "/~0~1"}, {"~01", "/~001"}, {"日本", "/日本"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := pointer("", tt.key); got != tt.want {
				t.Errorf("pointer(%q) = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}

// The schema described for a capability says what the validator checks.
func TestInputSchema(t *testing.T) {
	js := inputSchema(map[string]Param{
		"sku": {Type: "string", Required: true, Pattern: "^[A-Z]"},
		"qty": {Type: "integer", Minimum: ptrF(1), Default: 1},
		"a":   {Required: true},
	})
	b, _ := json.Marshal(js)
	want := `{"type":"object","properties":{"a":{},"qty":{"type":"integer","minimum":1,"default":1},"sku":{"type":"string","pattern":"^[A-Z]"}},"required":["a","sku"],"additionalProperties":false}`
	if string(b) != want {
		t.Errorf("inputSchema =\n%s\nwant\n%s", b, want)
	}
}

var fuzzParams = map[string]Param{
	"s":    {Type: "string", MinLength: ptrI(1), MaxLength: ptrI(5), Pattern: "^[a-z]"},
	"n":    {Type: "number", Minimum: ptrF(-10), Maximum: ptrF(10)},
	"i":    {Type: "integer", Enum: []any{1, 2, 3}},
	"b":    {Type: "boolean", Required: true},
	"tags": {Type: "array", MaxItems: ptrI(3), Items: &Param{Type: "string", Pattern: "x"}},
	"o":    {Type: "object"},
	"any":  {Default: "d"},
}

// FuzzValidateInput feeds the validator any JSON object (numbers as
// json.Number, as the request decoder gives them): it never panics, every
// violation has a JSON Pointer path, the list is sorted and bounded, and a
// clean result holds only declared params.
func FuzzValidateInput(f *testing.F) {
	for _, tt := range paramsCases() {
		if b, err := json.Marshal(tt.input); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"s":"abc","n":1.5,"i":2,"b":true,"tags":["x","xx"],"o":{}}`))
	f.Add([]byte(`{"s":"","n":1e309,"i":1.0,"tags":[1,2,3,4,5],"a/b~":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var input map[string]any
		if d.Decode(&input) != nil {
			return
		}
		out, vs := validateInput(fuzzParams, input)
		if !sort.SliceIsSorted(vs, func(i, j int) bool { return vs[i].Path < vs[j].Path }) {
			t.Fatalf("violations not sorted: %v", vs)
		}
		for _, v := range vs {
			if !strings.HasPrefix(v.Path, "/") || v.Reason == "" {
				t.Fatalf("bad violation %+v", v)
			}
		}
		if len(vs) > maxViolations+len(fuzzParams)+len(input) {
			t.Fatalf("%d violations", len(vs))
		}
		if len(vs) == 0 {
			for k := range out {
				if _, ok := fuzzParams[k]; !ok {
					t.Fatalf("unknown key %q accepted", k)
				}
			}
			if _, ok := out["b"]; !ok {
				t.Fatalf("required b missing without a violation")
			}
		}
		// Deterministic: the same input gives the same answer.
		_, vs2 := validateInput(fuzzParams, input)
		if !cmp.Equal(vs, vs2, cmpopts.EquateEmpty()) {
			t.Fatalf("not deterministic: %v vs %v", vs, vs2)
		}
	})
}
