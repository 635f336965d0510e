package gateway

import (
	"encoding/json"
	"testing"
)

// FuzzTopLevel: topLevel accepts exactly the JSON objects without a
// repeated top-level key, and the members it returns are what
// encoding/json reads from the same bytes.
func FuzzTopLevel(f *testing.F) {
	for _, s := range []string{`{"model":"m","stream":true}`, `{"model":"a","model":"b"}`, `[]`, `{"a":{"a":1,"a":2}}`,
		`{"model":"m"} {}`, `{`, ``, `"x"`, `{"a":1,}`, "{\"model\":\"m\"}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fields, ok := topLevel(body)
		var m map[string]json.RawMessage
		isObject := json.Unmarshal(body, &m) == nil && m != nil
		if ok && !isObject {
			t.Fatalf("topLevel accepted %q, which is not a JSON object", body)
		}
		if !ok {
			return
		}
		if len(fields) != len(m) {
			t.Fatalf("%q: %d members, encoding/json reads %d", body, len(fields), len(m))
		}
		for k, v := range fields {
			var a, b any
			if json.Unmarshal(v, &a) != nil || json.Unmarshal(m[k], &b) != nil {
				t.Fatalf("%q: member %q does not decode", body, k)
			}
		}
	})
}
