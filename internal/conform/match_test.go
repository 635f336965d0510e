package conform

import "testing"

// TestMatch pins the subset matching of docs/protocol.md §7.1 and the save/eq/ne
// extension: each case must fail or pass as named.
func TestMatch(t *testing.T) {
	tests := []struct {
		name, want, got string
		vars            map[string]any
		ok              bool
	}{
		{"subset: extra fields are not checked", `{"a":1}`, `{"a":1,"b":2}`, nil, true},
		{"a missing field fails", `{"a":1}`, `{"b":1}`, nil, false},
		{"numbers compare by value", `{"a":1}`, `{"a":1.0}`, nil, true},
		{"a different number fails", `{"a":1}`, `{"a":2}`, nil, false},
		{"arrays need the same length", `{"a":[1]}`, `{"a":[1,2]}`, nil, false},
		{"arrays match element-wise", `{"a":[{"x":1}]}`, `{"a":[{"x":1,"y":2}]}`, nil, true},
		{"<any> needs the field present", `{"a":"<any>"}`, `{}`, nil, false},
		{"<any> matches anything present", `{"a":"<any>"}`, `{"a":null}`, nil, true},
		{"id null checks null", `{"id":null}`, `{"id":"r1"}`, nil, false},
		{"save keeps the value", `{"r":"<save:x>"}`, `{"r":"v1"}`, map[string]any{}, true},
		{"eq passes on the saved value", `{"r":"<eq:x>"}`, `{"r":"v1"}`, map[string]any{"x": "v1"}, true},
		{"eq fails on another value", `{"r":"<eq:x>"}`, `{"r":"v2"}`, map[string]any{"x": "v1"}, false},
		{"eq fails when nothing was saved", `{"r":"<eq:x>"}`, `{"r":"v1"}`, map[string]any{}, false},
		{"ne fails on the saved value", `{"r":"<save:y,ne:x>"}`, `{"r":"v1"}`, map[string]any{"x": "v1"}, false},
		{"ne passes on another value", `{"r":"<save:y,ne:x>"}`, `{"r":"v2"}`, map[string]any{"x": "v1"}, true},
		{"an unknown directive fails", `{"r":"<bogus:x>"}`, `{"r":"v"}`, map[string]any{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := tt.vars
			if vars == nil {
				vars = map[string]any{}
			}
			ms := match([]byte(tt.want), []byte(tt.got), vars)
			if (len(ms) == 0) != tt.ok {
				t.Errorf("match(%s, %s) = %v, want ok=%v", tt.want, tt.got, ms, tt.ok)
			}
		})
	}
}
