package jsonmap

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/wanterr"
)

// TestRows: a records reader's rows are read as json.Unmarshal reads them
// into []Row, by scanning JSON.stringify's spelling when they are plain,
// else with the decoder generated for pagespec.Row, which reads the exact
// names only: a member spelled in another case is refused, not taken as
// json.Unmarshal takes it, and so is a repeated key.
func TestRows(t *testing.T) {
	cases := []struct {
		text string
		scan bool
		err  string // a substring of Rows' error; "" when json.Unmarshal's reading
	}{
		{`[]`, true, ""},
		{`[{"id":"o-1","label":"Order 1 — €5","visible":true},{"id":"o-2","label":"","visible":false},{"id":"o-3"},{}]`, true, ""},
		{`[{"visible":false,"label":"l","id":"i"}]`, true, ""},
		{`[{"id":"x","extra":[1,{}]}]`, false, ""},
		{`[{"ID":"x"}]`, false, `member "ID" is spelled "id"`},
		{`[{"id":"x","Label":"y"}]`, false, `member "Label" is spelled "label"`},
		{`[{"id":"x","VISIBLE":true}]`, false, `member "VISIBLE" is spelled "visible"`},
		{`[{"id":"a\"b","label":"\u00e9"}]`, false, ""},
		{`[{"id":"a\ud800"}]`, false, ""},
		{`[ {"id":"a"} ]`, false, ""},
		{`null`, false, ""},
		{`[null]`, false, ""},
		{`[{"id":"a","visible":null}]`, false, ""},
		{`[{"id":"a"},]`, false, "syntax"},
		{`[{"id":"a"}`, false, "syntax"},
		{`[{"id":"a",}]`, false, "syntax"},
		{`[{"id":"a","visible":truex}]`, false, "syntax"},
		{`[{"id":"a","visible":true,"visible":false}]`, false, "duplicate key"},
		{`[{"id":"a","id":"b"}]`, false, "duplicate key"},
		{"[{\"id\":\"a\x01\"}]", false, "syntax"},
		{"[{\"id\":\"\xff\"}]", false, "UTF-8"},
		{`[{"id":1}]`, false, "Row.id: want a string"},
		{`[{"id":"a","visible":"yes"}]`, false, "Row.visible: want a boolean"},
		{`{"id":"a"}`, false, "rows: want an array"},
		{`[{"id":"a"}] x`, false, "trailing"},
		{`[{"id":"a"}]]`, false, "trailing"},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			scanned, scan := scanRows(c.text)
			if scan != c.scan {
				t.Errorf("scan applied %v, want %v", scan, c.scan)
			}
			got, gerr := Rows(c.text)
			if wanterr.Check(t, "Rows", gerr, c.err) {
				return
			}
			var want []Row
			if err := json.Unmarshal([]byte(c.text), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-json.Unmarshal +Rows):\n%s", diff)
			}
			if diff := cmp.Diff(want, scanned); scan && diff != "" {
				t.Errorf("(-json.Unmarshal +scanRows):\n%s", diff)
			}
		})
	}
}

// FuzzRows is the differential test of Rows (the scan and the generated
// decoder) against json.Unmarshal: what Rows reads, json.Unmarshal reads
// alike; what Rows refuses and json.Unmarshal reads has a member spelled
// in another case, a repeated key or is not UTF-8 (which text from
// JSON.stringify never is).
func FuzzRows(f *testing.F) {
	f.Add(`[{"id":"o-1","label":"Order 1","visible":true},{"id":"o-2"}]`)
	f.Add(`[{"visible":false,"label":"l\\n","id":"i"},{}]`)
	f.Add(`[{"ID":"x"},null]`)
	f.Fuzz(func(t *testing.T, text string) {
		var want []Row
		werr := json.Unmarshal([]byte(text), &want)
		if scanned, ok := scanRows(text); ok {
			if werr != nil {
				t.Fatalf("%s: scanRows read it, json.Unmarshal failed: %v", text, werr)
			}
			if diff := cmp.Diff(want, scanned); diff != "" {
				t.Fatalf("%s (-json.Unmarshal +scanRows):\n%s", text, diff)
			}
		}
		got, err := Rows(text)
		switch {
		case err == nil && werr != nil:
			t.Fatalf("%s: Rows read it, json.Unmarshal failed: %v", text, werr)
		case err == nil:
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s (-json.Unmarshal +Rows):\n%s", text, diff)
			}
		case werr == nil && !strings.Contains(err.Error(), "is spelled") && !strings.Contains(err.Error(), "duplicate key") &&
			utf8.ValidString(text): // the text is a JS string's, always UTF-8
			t.Fatalf("%s: Rows refused (%v), json.Unmarshal read it", text, err)
		}
	})
}
