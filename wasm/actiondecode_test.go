//go:build js && wasm

package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// TestActionOf reads pling.action()'s data by the exact json names of
// pagespec.Action: an expect's equals keeps null apart from absent, and a
// member spelled in another case (record.Kind, ID) is refused instead of
// read. Run it with
// GOOS=js GOARCH=wasm go test -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" ./wasm/
func TestActionOf(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	n := func(x int) *int { return &x }
	tests := []struct {
		name string
		text string
		want runtime.Action
		err  string // a substring of the error; "" for none
	}{
		{name: "row action",
			text: `{"id":"approve","title":"Approve","record":{"kind":"order","id":"o-1","allowOffscreen":true},"identity":"function () {}"}`,
			want: runtime.Action{ID: "approve", Title: "Approve", Record: &runtime.RecordRef{Kind: "order", ID: "o-1", AllowOffscreen: true}, Identity: "function () {}"}},
		{name: "record kind spelled Kind", text: `{"id":"approve","record":{"Kind":"order"}}`, err: `"Kind" is spelled "kind"`},
		{name: "record id spelled ID", text: `{"id":"approve","record":{"kind":"order","ID":"o-1"}}`, err: `"ID" is spelled "id"`},
		{name: "record allowOffscreen spelled AllowOffscreen", text: `{"id":"approve","record":{"kind":"order","AllowOffscreen":true}}`, err: `"AllowOffscreen" is spelled "allowOffscreen"`},
		{name: "id spelled ID", text: `{"ID":"approve"}`, err: `"ID" is spelled "id"`},
		{name: "equals null is a value",
			text: `{"id":"clear","expect":{"state":"cart","equals":null}}`,
			want: runtime.Action{ID: "clear", Expect: &runtime.Expectation{State: "cart", HasEquals: true}}},
		{name: "equals absent sets none",
			text: `{"id":"add","expect":{"state":"cart","change":"change","timeoutMs":500}}`,
			want: runtime.Action{ID: "add", Expect: &runtime.Expectation{State: "cart", Change: "any", TimeoutMs: 500}}},
		{name: "equals keeps a number's text",
			text: `{"id":"set","expect":{"state":"n","equals":{"v":[1.50,2]}}}`,
			want: runtime.Action{ID: "set", Expect: &runtime.Expectation{State: "n", HasEquals: true,
				Equals: map[string]any{"v": []any{json.Number("1.50"), json.Number("2")}}}}},
		{name: "null expect is absent", text: `{"id":"x","expect":null}`, want: runtime.Action{ID: "x"}},
		{name: "params",
			text: `{"id":"refund","risk":"destructive","approval":true,"params":{"reason":{"type":"string","required":true,"enum":["damaged",1,null],"minimum":-1.5,"maxLength":200,"default":null,"items":{"type":"number","minItems":1}}}}`,
			want: runtime.Action{ID: "refund", Risk: schema.RiskDestructive, Approval: true, Params: map[string]runtime.Param{
				"reason": {Type: "string", Required: true, Enum: []any{"damaged", 1.0, nil}, Minimum: f(-1.5), MaxLength: n(200),
					Items: &runtime.Param{Type: "number", MinItems: n(1)}}}}},
		{name: "steps and handoff",
			text: `{"id":"wizard","steps":[{"title":"one","expect":{"state":"s","change":"increase"}},{}],"handoff":{"prompt":"Sign","timeoutMs":30000}}`,
			want: runtime.Action{ID: "wizard", Steps: []runtime.Step{{Title: "one", Expect: &runtime.Expectation{State: "s", Change: "increase"}}, {}},
				Handoff: &runtime.Handoff{Prompt: "Sign", TimeoutMs: 30000}}},
		{name: "id of the wrong type", text: `{"id":1}`, err: "Action.id: want a string"},
		{name: "minLength not an integer", text: `{"id":"x","params":{"p":{"minLength":1.5}}}`, err: "Param.minLength: want an integer"},
		{name: "not an object", text: `[]`, err: "Action: want an object"},
		{name: "not JSON", text: `{"id":`, err: "pling.action"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := actionOf(tc.text, safejs.Undefined())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("actionOf(%s) = %+v, %v; want an error with %q", tc.text, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("actionOf(%s): %v", tc.text, err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("actionOf(%s) (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

// TestAuthorText: an error the page's author reads says "pling:" once.
func TestAuthorText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"declaration error", `pling: invalid action "x": risk: must be read, write or destructive`, `pling: invalid action "x": risk: must be read, write or destructive`},
		{"wrapped twice", "pling: pling: bad configuration", "pling: bad configuration"},
		{"kind prefix", "pling.state: bad key", "pling.state: bad key"},
		{"kind prefix after pling", "pling: pling.action: bad", "pling.action: bad"},
		{"no prefix", "argument 1 must be a string", "pling: argument 1 must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := authorText(errors.New(tt.in)); got != tt.want {
				t.Errorf("authorText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
