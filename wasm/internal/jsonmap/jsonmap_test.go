package jsonmap

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRows(t *testing.T) {
	cases := []struct {
		text       string
		fast, scan bool
	}{
		{`[]`, true, true},
		{`[{"id":"o-1","label":"Order 1 — €5","visible":true},{"id":"o-2","label":"","visible":false},{"id":"o-3"},{}]`, true, true},
		{`[{"visible":false,"label":"l","id":"i"}]`, true, true},
		{`[{"ID":"x","Label":"y","VISIBLE":true,"extra":[1,{}]}]`, true, false},
		{`[{"id":"a\"b","label":"\u00e9"}]`, true, false},
		{`[{"id":"a\ud800"}]`, true, false},
		{`[ {"id":"a"} ]`, true, false},
		{`[{"id":"a"},]`, false, false},
		{`[{"id":"a"}`, false, false},
		{`[{"id":"a",}]`, false, false},
		{`[{"id":"a","visible":truex}]`, false, false},
		{`[{"id":"a","visible":true,"visible":false}]`, false, false},
		{"[{\"id\":\"a\x01\"}]", false, false},
		{"[{\"id\":\"\xff\"}]", false, false},
		{`null`, false, false},
		{`[null]`, false, false},
		{`[{"id":1}]`, false, false},
		{`[{"id":"a","visible":null}]`, false, false},
		{`[{"id":"a","visible":"yes"}]`, false, false},
		{`{"id":"a"}`, false, false},
		{`[{"id":"a"}] x`, false, false},
		{`[{"id":"a"}]]`, false, false},
		{`[{"id":"a","id":"b"}]`, false, false},
	}
	for _, c := range cases {
		_, fast := fastRows([]byte(c.text))
		if fast != c.fast {
			t.Errorf("%s: fast path applied %v, want %v", c.text, fast, c.fast)
		}
		scanned, scan := scanRows(c.text)
		if scan != c.scan {
			t.Errorf("%s: scan applied %v, want %v", c.text, scan, c.scan)
		}
		got, gerr := Rows(c.text)
		var want []Row
		werr := json.Unmarshal([]byte(c.text), &want)
		if (gerr != nil) != (werr != nil) {
			t.Errorf("%s: error %v, json.Unmarshal's %v", c.text, gerr, werr)
		}
		if werr == nil {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-json.Unmarshal +Rows):\n%s", c.text, diff)
			}
			if diff := cmp.Diff(want, scanned); scan && diff != "" {
				t.Errorf("%s (-json.Unmarshal +scanRows):\n%s", c.text, diff)
			}
		}
	}
}

func FuzzRows(f *testing.F) {
	f.Add(`[{"id":"o-1","label":"Order 1","visible":true},{"id":"o-2"}]`)
	f.Add(`[{"visible":false,"label":"l\\n","id":"i"},{}]`)
	f.Fuzz(func(t *testing.T, text string) {
		var want []Row
		werr := json.Unmarshal([]byte(text), &want)
		for name, read := range map[string]func(string) ([]Row, bool){
			"fastRows": func(s string) ([]Row, bool) { return fastRows([]byte(s)) },
			"scanRows": scanRows,
		} {
			got, ok := read(text)
			if !ok {
				continue
			}
			if werr != nil {
				t.Fatalf("%s: %s read it, json.Unmarshal failed: %v", text, name, werr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s (-json.Unmarshal +%s):\n%s", text, name, diff)
			}
		}
		got, err := Rows(text)
		if (err != nil) != (werr != nil) || (err == nil && !cmp.Equal(want, got)) {
			t.Fatalf("%s: Rows %v %v, json.Unmarshal %v %v", text, got, err, want, werr)
		}
	})
}
