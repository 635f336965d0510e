package pagespec

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/internal/testing/wanterr"
)

// The reference reading of an action: json.Unmarshal into the same
// members, an expect's equals as json.RawMessage (which keeps null apart
// from absent), then equals read as the generated decoder keeps it.
type (
	refAction struct {
		ID          string           `json:"id"`
		Title       string           `json:"title"`
		Description string           `json:"description"`
		Params      map[string]Param `json:"params"`
		Risk        string           `json:"risk"`
		Expect      *refExpect       `json:"expect"`
		Steps       []struct {
			Title  string     `json:"title"`
			Expect *refExpect `json:"expect"`
		} `json:"steps"`
		Handoff  *Handoff   `json:"handoff"`
		Approval bool       `json:"approval"`
		Region   string     `json:"region"`
		Record   *RecordRef `json:"record"`
		Identity any        `json:"identity"`
	}
	refExpect struct {
		State     string          `json:"state"`
		Change    string          `json:"change"`
		Equals    json.RawMessage `json:"equals"`
		TimeoutMs int64           `json:"timeoutMs"`
	}
)

func unmarshalAction(data []byte) (Action, error) {
	var r refAction
	if err := json.Unmarshal(data, &r); err != nil {
		return Action{}, err
	}
	expect := func(e *refExpect) (*Expect, error) {
		if e == nil {
			return nil, nil
		}
		x := &Expect{State: e.State, Change: e.Change, TimeoutMs: e.TimeoutMs}
		if len(e.Equals) > 0 {
			v, err := jsonvalue.Parse(e.Equals, 10000)
			if err != nil {
				return nil, err
			}
			x.Equals = RawJSON{Set: true, Value: v}
		}
		return x, nil
	}
	a := Action{ID: r.ID, Title: r.Title, Description: r.Description, Params: r.Params, Risk: r.Risk,
		Handoff: r.Handoff, Approval: r.Approval, Region: r.Region, Record: r.Record, Identity: r.Identity}
	var err error
	if a.Expect, err = expect(r.Expect); err != nil {
		return a, err
	}
	if r.Steps != nil {
		a.Steps = make([]Step, len(r.Steps))
	}
	for i, s := range r.Steps {
		a.Steps[i].Title = s.Title
		if a.Steps[i].Expect, err = expect(s.Expect); err != nil {
			return a, err
		}
	}
	return a, nil
}

// TestDecodeAction: an action as the shim and the markup send it is read
// as json.Unmarshal reads it, equals kept with null apart from absent;
// other spellings of a member (record.Kind among them) and wrong types
// are refused.
func TestDecodeAction(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want string // "" when accepted
	}{
		{"row action", `{"id":"approve","title":"Approve","record":{"kind":"order","id":"o-1","allowOffscreen":true}}`, ""},
		{"params", `{"id":"p","params":{"n":{"type":"integer","minimum":0,"maximum":1e21,"minLength":1,"enum":[1,"a",null,{"x":[2.5]}],"default":3,"items":{"items":{}}},"z":null}}`, ""},
		{"equals null", `{"id":"x","expect":{"state":"s","equals":null}}`, ""},
		{"equals object", `{"id":"x","expect":{"state":"s","equals":{"a":[1.50,"b",null]}}}`, ""},
		{"steps", `{"id":"w","steps":[{"title":"one","expect":{"state":"s","equals":0}},{},null],"handoff":{"prompt":"p","timeoutMs":5}}`, ""},
		{"nulls are absent", `{"id":"x","title":null,"expect":null,"record":null,"params":null}`, ""},
		{"record Kind", `{"id":"x","record":{"Kind":"order"}}`, `member "Kind" is spelled "kind"`},
		{"record KIND beside kind", `{"id":"x","record":{"kind":"order","KIND":"other"}}`, `member "KIND" is spelled "kind"`},
		{"record AllowOffscreen", `{"id":"x","record":{"kind":"k","AllowOffscreen":true}}`, `member "AllowOffscreen" is spelled "allowOffscreen"`},
		{"expect Equals", `{"id":"x","expect":{"Equals":1}}`, `member "Equals" is spelled "equals"`},
		{"param Type", `{"id":"x","params":{"p":{"Type":"string"}}}`, `member "Type" is spelled "type"`},
		{"id", `{"id":1}`, "Action.id: want a string"},
		{"minLength", `{"id":"x","params":{"p":{"minLength":1.5}}}`, "Param.minLength: want an integer"},
		{"timeoutMs", `{"id":"x","handoff":{"timeoutMs":"1"}}`, "Handoff.timeoutMs: want an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeAction(parse(t, tc.text))
			if wanterr.Check(t, "DecodeAction("+tc.text+")", err, tc.want) {
				return
			}
			want, err := unmarshalAction([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-json.Unmarshal +DecodeAction):\n%s", diff)
			}
		})
	}
	t.Run("equals absent and null differ", func(t *testing.T) {
		absent, err := DecodeAction(parse(t, `{"id":"x","expect":{"state":"s"}}`))
		if err != nil {
			t.Fatal(err)
		}
		null, err := DecodeAction(parse(t, `{"id":"x","expect":{"state":"s","equals":null}}`))
		if err != nil {
			t.Fatal(err)
		}
		if absent.Expect.Equals != (RawJSON{}) || null.Expect.Equals != (RawJSON{Set: true}) {
			t.Errorf("equals absent = %+v, null = %+v; want {} and {Set:true}", absent.Expect.Equals, null.Expect.Equals)
		}
	})
}

// FuzzDecodeAction is the differential test of the generated action
// decoder (it replaced the hand-written one and its jsonmap helpers):
// what it reads, json.Unmarshal reads alike; what it refuses and
// json.Unmarshal reads has a member spelled in another case.
func FuzzDecodeAction(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","record":{"kind":"order"},"params":{"n":{"type":"string","maxLength":3,"enum":["x",1]}}}`,
		`{"id":"a","expect":{"state":"s","change":"increase","equals":null,"timeoutMs":10}}`,
		`{"id":"a","steps":[{"title":"t","expect":{"equals":{"k":[1]}}}],"handoff":{"prompt":"p"}}`,
		`{"ID":"a","record":{"Kind":"k"}}`, `[1]`, `{"identity":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsonvalue.Parse(data, 64)
		if err != nil || v == nil {
			return // the shim always sends an object
		}
		got, gerr := DecodeAction(v)
		want, jerr := unmarshalAction(data)
		agrees(t, "DecodeAction", data, want, jerr, got, gerr)
	})
}
