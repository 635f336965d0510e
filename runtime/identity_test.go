package runtime

import (
	"context"
	"encoding/json"
	"math"
	"testing"
)

// TestActionShapeFastPath checks that actionShapeValue gives the digest
// encoding/json's way gives, and that it declines what it cannot give
// exactly.
func TestActionShapeFastPath(t *testing.T) {
	run := func(context.Context, *Call) (any, error) { return nil, nil }
	f := func(x float64) *float64 { return &x }
	n := func(x int) *int { return &x }
	cases := []struct {
		name string
		a    Action
		fast bool
	}{
		{"bare", Action{ID: "a", Title: "A"}, true},
		{"full", Action{ID: "approve", Title: "Approve <order> & co", Description: "Approves\u2028it", Risk: "write", Approval: true, Region: "main",
			Run: run, Available: func(context.Context, string) Availability { return Available },
			Params: map[string]Param{
				"note":   {Type: "string", MaxLength: n(200), MinLength: n(0), Description: "A note", Pattern: "^[a-z]+$"},
				"reason": {Type: "string", Required: true, Enum: []any{"damaged", "late", 1.5, json.Number("2"), true, nil}},
				"count":  {Type: "integer", Minimum: f(math.Copysign(0, -1)), Maximum: f(1e21), Default: 3.0},
				"tags":   {Type: "array", Items: &Param{Type: "number", Minimum: f(1e-7), Maximum: f(9007199254740993)}, MinItems: n(1), MaxItems: n(-5)},
				"any":    {Default: map[string]any{"b": []any{1.0, "x", map[string]any{}}, "a": json.Number("-1.5e3")}},
			},
			Expect:   &Expectation{State: "orders.pending", Change: "decrease", TimeoutMs: 5000, Predicate: func(any, any) bool { return true }},
			Record:   &RecordRef{Kind: "order", AllowOffscreen: true},
			Handoff:  &Handoff{Prompt: "Sign", TimeoutMs: -1},
			Identity: "function () {}"}, true},
		{"steps", Action{ID: "s", Title: "S", Steps: []Step{{Title: "one", Run: run}, {Expect: &Expectation{State: "x", Equals: []any{}, HasEquals: true}}}}, true},
		{"equals", Action{ID: "e", Title: "E", Expect: &Expectation{State: "x", Equals: map[string]any{"k": json.Number("10")}, HasEquals: true}}, true},
		{"equals int", Action{ID: "e", Title: "E", Expect: &Expectation{State: "x", Equals: 3, HasEquals: true}}, false},
		{"equals nil map", Action{ID: "e", Title: "E", Expect: &Expectation{State: "x", Equals: map[string]any(nil), HasEquals: true}}, false},
		{"equals nil slice", Action{ID: "e", Title: "E", Expect: &Expectation{State: "x", Equals: []any{[]any(nil)}, HasEquals: true}}, false},
		{"equals bad number", Action{ID: "e", Title: "E", Expect: &Expectation{State: "x", Equals: json.Number("0x10"), HasEquals: true}}, false},
		{"equals empty number", Action{ID: "e", Title: "E", Expect: &Expectation{State: "x", Equals: json.Number(""), HasEquals: true}}, false},
		{"equals bad utf8", Action{ID: "e", Title: "E", Expect: &Expectation{State: "x", Equals: "a\xffb", HasEquals: true}}, false},
		{"equals bad utf8 key", Action{ID: "e", Title: "E", Expect: &Expectation{State: "x", Equals: map[string]any{"\xff": 1.0}, HasEquals: true}}, false},
		{"bad utf8 description", Action{ID: "p", Title: "P", Params: map[string]Param{"x": {Description: "\xfe"}}}, false},
		{"bad utf8 step", Action{ID: "p", Title: "P", Steps: []Step{{Title: "\xfe"}}}, false},
		{"bad utf8 prompt", Action{ID: "p", Title: "P", Handoff: &Handoff{Prompt: "\xfe"}}, false},
		{"bad utf8 state", Action{ID: "p", Title: "P", Expect: &Expectation{State: "\xfe"}}, false},
		{"default int", Action{ID: "p", Title: "P", Params: map[string]Param{"x": {Default: 3}}}, false},
		{"enum nan", Action{ID: "p", Title: "P", Params: map[string]Param{"x": {Enum: []any{math.NaN()}}}}, false},
		{"minimum inf", Action{ID: "p", Title: "P", Params: map[string]Param{"x": {Minimum: f(math.Inf(1))}}}, false},
		{"empty enum", Action{ID: "p", Title: "P", Params: map[string]Param{"x": {Enum: []any{}}}}, true},
		{"bad utf8 risk", Action{ID: "p", Title: "P", Risk: "\xfe"}, false},
		{"identity struct", Action{ID: "p", Title: "P", Identity: struct{ A int }{1}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, fast := actionShapeValue(&c.a)
			if fast != c.fast {
				t.Errorf("fast path applies: %v, want %v", fast, c.fast)
			}
			got, err1 := actionShape(&c.a)
			want, err2 := actionShapeSlow(&c.a)
			if (err1 == nil) != (err2 == nil) || got != want {
				t.Errorf("actionShape = %q, %v; encoding/json's way %q, %v", got, err1, want, err2)
			}
		})
	}
}
