package jsonmap

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/schema"
)

// every has a field of each kind the helpers read, one of them untagged
// (matched by its Go name, case-insensitively).
type every struct {
	S    string            `json:"s"`
	B    bool              `json:"b"`
	BP   *bool             `json:"bp"`
	I    int64             `json:"i"`
	IP   *int              `json:"ip"`
	FP   *float64          `json:"fp"`
	A    any               `json:"a"`
	AS   []any             `json:"as"`
	SS   []string          `json:"ss"`
	SM   map[string]string `json:"sm"`
	Kind string
}

func decodeEvery(text string) (every, bool) {
	var e every
	v, err := schema.ParseValue([]byte(text), 64)
	if err != nil {
		return e, false
	}
	f, ok := Fields(v, "s", "b", "bp", "i", "ip", "fp", "a", "as", "ss", "sm", "Kind")
	if !ok {
		return e, false
	}
	var oks [11]bool
	e.S, oks[0] = String(f[0])
	e.B, oks[1] = Bool(f[1])
	e.BP, oks[2] = BoolPtr(f[2])
	e.I, oks[3] = Int64(f[3])
	e.IP, oks[4] = IntPtr(f[4])
	e.FP, oks[5] = Float64Ptr(f[5])
	e.A, oks[6] = Any(f[6])
	e.AS, oks[7] = AnySlice(f[7])
	e.SS, oks[8] = Strings(f[8])
	e.SM, oks[9] = StringMap(f[9])
	e.Kind, oks[10] = String(f[10])
	for _, o := range oks {
		if !o {
			return e, false
		}
	}
	return e, true
}

// checkEvery fails when the fast path applies to text and gives other
// than json.Unmarshal; it reports whether it applied.
func checkEvery(t *testing.T, text string) bool {
	t.Helper()
	got, ok := decodeEvery(text)
	if !ok {
		return false
	}
	var want every
	if err := json.Unmarshal([]byte(text), &want); err != nil {
		t.Fatalf("%s: the fast path read it, json.Unmarshal failed: %v", text, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s (-json.Unmarshal +fast):\n%s", text, diff)
	}
	return true
}

func TestFieldsAgainstUnmarshal(t *testing.T) {
	cases := []struct {
		text string
		fast bool
	}{
		{`{}`, true},
		{`{"s":"x","b":true,"bp":false,"i":-12,"ip":7,"fp":1.5e3,"a":{"k":[1,"x",null,{"z":2.5}]},"as":[1,true,"s"],"ss":["a",""],"sm":{"k":"v","":"e"},"kind":"order"}`, true},
		{`{"S":"upper","KIND":"k","Sm":{}}`, true},
		{`{"unknown":123,"other":{"deep":[null]}}`, true},
		{`{"a":null}`, false},                 // null: json.Unmarshal sets nil; left to it
		{`{"s":"x","S":"y"}`, false},          // two keys for one field
		{`{"\u017f":"x"}`, false},             // long s folds to s in encoding/json
		{`{"K\u212aind":"x"}`, false},         // non-ASCII key
		{`{"s":1}`, false},                    // wrong type: json.Unmarshal's error
		{`{"i":1.5}`, false},                  // not an integer
		{`{"i":1e3}`, false},                  // not an integer literal
		{`{"i":99999999999999999999}`, false}, // out of range
		{`{"ip":-3}`, true},
		{`{"fp":1e400}`, false}, // out of range
		{`{"a":1e400}`, false},  // out of range
		{`{"as":[]}`, true},     // empty, not nil
		{`{"ss":[]}`, true},     // empty, not nil
		{`{"ss":["a",null]}`, false},
		{`{"sm":{"k":null}}`, false},
		{`{"sm":{"k":1}}`, false},
		{`{"b":"true"}`, false},
		{`[]`, false},
		{`"x"`, false},
		{`{"s":"a\ud800b"}`, true},   // a lone surrogate is U+FFFD either way
		{`{"s":"x","s":"y"}`, false}, // duplicate key: the parser refuses it
	}
	for _, c := range cases {
		if got := checkEvery(t, c.text); got != c.fast {
			t.Errorf("%s: fast path applied %v, want %v", c.text, got, c.fast)
		}
	}
}

func FuzzFields(f *testing.F) {
	f.Add(`{"s":"x","b":true,"bp":false,"i":-12,"ip":7,"fp":1.5e3,"a":{"k":[1]},"as":[1],"ss":["a"],"sm":{"k":"v"},"kind":"o"}`)
	f.Add(`{"S":1,"KIND":null}`)
	f.Fuzz(func(t *testing.T, text string) { checkEvery(t, text) })
}

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
