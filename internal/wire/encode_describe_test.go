package wire

import (
	"github.com/pling-go/pling/schema"

	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/internal/jsonvalue"
)

// describeAnys are values typed any of every kind the describe encoders
// meet, plain and not.
func describeAnys() []any {
	type point struct {
		X int `json:"x"`
	}
	var nilPoint *point
	return []any{nil, "a<b>&\u2028\"\x01\xff", true, false, json.Number("1.50"), json.Number("-0"), json.Number("1e+30"), json.Number(""),
		3.25, 1e21, 1e20, 1e-6, 1e-7, 123456789.0, math.Copysign(0, -1), 5e-324, math.MaxFloat64, 42, int64(-7), uint8(3), float32(0.1),
		[]any{1.0, "x", nil, []any{}}, []any(nil), map[string]any(nil),
		map[string]any{"b": 1.0, "a": map[string]any{"z": []any{}}, "é": "\u2029", "<": json.Number("7")},
		point{7}, nilPoint, []string(nil), map[string]any{}, map[string]int{"k": 1}, jsonvalue.Compact(`{"k":[1,2]}`)}
}

func TestAppendCapability(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	n := func(x int) *int { return &x }
	no, yes := false, true
	var cases []schema.SurfaceCapability
	cases = append(cases,
		schema.SurfaceCapability{},
		schema.SurfaceCapability{ID: "a", Title: "A", Risk: "read", InputSchema: schema.JSONSchema{Type: "object"}},
		schema.SurfaceCapability{ID: "approve@order", Title: "Approve <order>", Description: "d\n&", Risk: "write", Approval: true, Handoff: true, Steps: 3,
			InputSchema: schema.JSONSchema{Type: "object", Required: []string{"a", "b"}, AdditionalProperties: &no, Properties: map[string]*schema.PropertySchema{
				"b": {Type: "string", Description: "x", MinLength: n(0), MaxLength: n(200), Pattern: `^\d+$`, MinItems: n(-1), MaxItems: n(9)},
				"a": {Enum: []any{"x", 1.0, nil}, Minimum: f(math.Copysign(0, -1)), Maximum: f(1e21), Items: &schema.PropertySchema{Type: "number", Minimum: f(1e-7)}},
				"c": nil,
				"d": {},
			}},
			Record: &schema.RecordTemplate{Kind: "order", Template: "approve:{record}", Total: 500, Visible: []string{"o-1", "o-2"}, Offscreen: 480, AllowOffscreen: true, Truncated: true}},
		schema.SurfaceCapability{ID: "x", InputSchema: schema.JSONSchema{Properties: map[string]*schema.PropertySchema{}, Required: []string{}, AdditionalProperties: &yes},
			Record: &schema.RecordTemplate{Visible: []string{}}},
		schema.SurfaceCapability{ID: "x", Record: &schema.RecordTemplate{}},
	)
	for _, v := range describeAnys() {
		cases = append(cases, schema.SurfaceCapability{ID: "v", InputSchema: schema.JSONSchema{Properties: map[string]*schema.PropertySchema{
			"p": {Default: v, Enum: []any{v}}}}})
	}
	for _, x := range []float64{0.1, 1e-6, 1e-7, 1e21, 1e20, -1e-9, 123.456, 9007199254740993, math.SmallestNonzeroFloat64} {
		cases = append(cases, schema.SurfaceCapability{ID: "f", InputSchema: schema.JSONSchema{Properties: map[string]*schema.PropertySchema{"p": {Minimum: f(x), Maximum: f(-x)}}}})
	}
	appendsAsEncode(t, "AppendCapability", cases, AppendCapability)
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		c := schema.SurfaceCapability{ID: "f", InputSchema: schema.JSONSchema{Properties: map[string]*schema.PropertySchema{"p": {Minimum: f(x)}}}}
		if _, err := AppendCapability(nil, &c); err == nil {
			t.Errorf("%v encoded", x)
		}
	}
}

func TestAppendContext(t *testing.T) {
	var cases []schema.SurfaceContext
	cases = append(cases,
		schema.SurfaceContext{},
		schema.SurfaceContext{Page: &schema.PageInfo{}},
		schema.SurfaceContext{Page: &schema.PageInfo{URL: "/a?b&c"}},
		schema.SurfaceContext{Page: &schema.PageInfo{Title: "T"}},
		schema.SurfaceContext{Page: &schema.PageInfo{URL: "u", Title: "T<>"},
			Regions: []schema.Region{{ID: "r"}, {ID: "m", Title: "Modal", Active: true, Modal: true}},
			Records: map[string]schema.RecordSet{
				"order": {Total: 2, Items: []schema.RecordItem{{ID: "o-1", Label: "Order 1 — €5"}, {ID: "o-2", Offscreen: true}}, Truncated: true},
				"empty": {Items: []schema.RecordItem{}},
				"nil":   {},
			},
			States:      map[string]any{"b": json.Number("3"), "a": "x", "c": nil},
			Feedback:    []schema.Feedback{{Level: "info", Message: "ok & done"}, {}},
			Unavailable: []schema.Unavailable{{ID: "u"}, {ID: "v", Reason: "r", Code: "C"}, {ID: "w", Code: "C"}},
			Guides:      []schema.Guide{{Target: "t"}, {Target: "g", Label: "L"}},
		},
		schema.SurfaceContext{Regions: []schema.Region{}, Records: map[string]schema.RecordSet{}, States: map[string]any{}, Feedback: []schema.Feedback{}, Unavailable: []schema.Unavailable{}, Guides: []schema.Guide{}},
	)
	for _, v := range describeAnys() {
		cases = append(cases, schema.SurfaceContext{States: map[string]any{"s": v, "t": []any{v}}})
	}
	appendsAsEncode(t, "AppendContext", cases, AppendContext)
	bad := schema.SurfaceContext{States: map[string]any{"f": func() {}}}
	if _, err := AppendContext(nil, &bad); err == nil {
		t.Error("a func value encoded")
	}
}

// appendsAsEncode checks that appendFn (name) writes each case byte for
// byte as schema.Encode does, and fails where schema.Encode fails.
func appendsAsEncode[T any](t *testing.T, name string, cases []T, appendFn func([]byte, *T) ([]byte, error)) {
	t.Helper()
	for i, c := range cases {
		want, werr := schema.Encode(c)
		got, gerr := appendFn(nil, &c)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("case %d (%#v): error %v, schema.Encode's %v", i, c, gerr, werr)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("case %d (-schema.Encode +%s):\n%s", i, name, diff)
		}
	}
}

func TestAppendValue(t *testing.T) {
	cases := append(describeAnys(), math.NaN(), json.Number("0x10"), json.Number(" 1"), func() {})
	appendsAsEncode(t, "AppendValue", cases, func(b []byte, v *any) ([]byte, error) { return schema.AppendValue(b, *v) })
}

// FuzzAppendValue checks schema.AppendValue against schema.Encode on what the parser
// reads and on float64s.
func FuzzAppendValue(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5e-7,"x\u2028"],"b":null,"c":true}`), 1.5)
	f.Add([]byte(`-0.0`), 1e21)
	f.Fuzz(func(t *testing.T, data []byte, x float64) {
		for _, v := range []any{x, []any{x, -x}} {
			want, werr := schema.Encode(v)
			got, gerr := schema.AppendValue(nil, v)
			if (werr != nil) != (gerr != nil) || string(want) != string(got) {
				t.Fatalf("%v: %q %v, schema.Encode %q %v", v, got, gerr, want, werr)
			}
		}
		v, err := jsonvalue.Parse(data, 100)
		if err != nil {
			return
		}
		want, werr := schema.Encode(v)
		got, gerr := schema.AppendValue(nil, v)
		if (werr != nil) != (gerr != nil) || string(want) != string(got) {
			t.Fatalf("%s: %q %v, schema.Encode %q %v", data, got, gerr, want, werr)
		}
	})
}
