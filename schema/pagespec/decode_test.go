package pagespec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/internal/testing/wanterr"
)

func parse(t *testing.T, text string) any {
	t.Helper()
	v, err := jsonvalue.Parse([]byte(text), 64)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return v
}

// TestDecodeConfig: what pages send is read as json.Unmarshal reads it
// into the same type, by the exact json names.
func TestDecodeConfig(t *testing.T) {
	for name, text := range map[string]string{
		"empty":           `{}`,
		"full":            `{"expose":["approve","open"],"origin":"https://shop.example","requireSession":true,"keys":{"k1":"AAAA","k2":null},"expectTimeoutMs":2000,"handoffTimeoutMs":1,"approvalTtlMs":60000,"other":{"x":1},"replayGuard":"memory"}`,
		"empty expose":    `{"expose":[]}`,
		"anonymous":       `{"anonymous":["cart.*"]}`,
		"anonymous empty": `{"anonymous":[]}`,
		"anonymous null":  `{"anonymous":null}`,
		"nulls":           `{"expose":["a",null],"origin":null,"rateLimit":null,"loop":null}`,
		// As the bench and demo pages send them.
		"rate limit":      `{"rateLimit":{"describe":{"burst":0},"invoke":{"burst":3,"perSecond":0.5}},"loop":{"repeats":0}}`,
		"loop":            `{"loop":{"repeats":3,"windowMs":1000}}`,
		"unknown members": `{"handoff":true,"approve":false,"x":[1,{"y":null}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeConfig(parse(t, text))
			if err != nil {
				t.Fatalf("DecodeConfig: %v", err)
			}
			var want Config
			if err := json.Unmarshal([]byte(text), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-json.Unmarshal +DecodeConfig):\n%s", diff)
			}
		})
	}
}

// TestDecodeConfigRefuses: a member spelled in another case, which
// json.Unmarshal would take and a decoder by exact names would drop, is
// refused, as is a value of the wrong type.
func TestDecodeConfigRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ text, want string }{
		"RateLimit":      {`{"RateLimit":{"describe":{"burst":1}}}`, `member "RateLimit" is spelled "rateLimit"`},
		"RequireSession": {`{"RequireSession":true}`, `member "RequireSession" is spelled "requireSession"`},
		"nested case":    {`{"rateLimit":{"Describe":{"burst":1}}}`, `member "Describe" is spelled "describe"`},
		"bucket case":    {`{"rateLimit":{"describe":{"Burst":1}}}`, `member "Burst" is spelled "burst"`},
		"loop case":      {`{"loop":{"Repeats":3}}`, `member "Repeats" is spelled "repeats"`},
		"not an object":  {`[]`, "Config: want an object"},
		"expose type":    {`{"expose":[1]}`, "Config.expose[]: want a string"},
		"expose string":  {`{"expose":"*"}`, "Config.expose: want an array"},
		"anonymous type": {`{"anonymous":"cart.*"}`, "Config.anonymous: want an array"},
		"bool":           {`{"requireSession":"yes"}`, "Config.requireSession: want a boolean"},
		"fraction":       {`{"expectTimeoutMs":1.5}`, "Config.expectTimeoutMs: want an integer"},
		"exponent":       {`{"expectTimeoutMs":1e3}`, "Config.expectTimeoutMs: want an integer"},
		"overflow":       {`{"approvalTtlMs":99999999999999999999}`, "Config.approvalTtlMs: want an integer"},
		"keys":           {`{"keys":{"k":1}}`, "Config.keys{}: want a string"},
		"per second":     {`{"rateLimit":{"invoke":{"perSecond":"1"}}}`, "Bucket.perSecond: want a number"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeConfig(parse(t, tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodeConfig(%s) = %v, want an error with %q", tc.text, err, tc.want)
			}
			// json.Unmarshal agrees the text is wrong, or takes the
			// miscased member that this decoder refuses.
			var c Config
			if jerr := json.Unmarshal([]byte(tc.text), &c); jerr == nil && !strings.Contains(tc.want, "is spelled") {
				t.Errorf("json.Unmarshal took %s", tc.text)
			}
		})
	}
}

func TestDecodeRecords(t *testing.T) {
	got, err := DecodeRecords(parse(t, `{"kind":"order","other":1}`))
	if err != nil || got.Kind != "order" {
		t.Errorf("DecodeRecords = %+v, %v", got, err)
	}
	for _, text := range []string{`{"kind":1}`, `{"KIND":"order"}`, `{"Kind":"order"}`, `"order"`} {
		if r, err := DecodeRecords(parse(t, text)); err == nil {
			t.Errorf("DecodeRecords(%s) = %+v, want an error", text, r)
		}
	}
}

// TestDecodeDeclarations: state, guide and region declarations as the shim
// and the markup send them are read as json.Unmarshal reads them (an
// identity's numbers as float64); other spellings of a member and wrong
// types are refused.
func TestDecodeDeclarations(t *testing.T) {
	type decl struct {
		decode    func(any) (any, error)
		unmarshal func(string) (any, error)
	}
	state := decl{func(v any) (any, error) { return DecodeState(v) }, func(s string) (any, error) {
		var x State
		err := json.Unmarshal([]byte(s), &x)
		return x, err
	}}
	guide := decl{func(v any) (any, error) { return DecodeGuide(v) }, func(s string) (any, error) {
		var x Guide
		err := json.Unmarshal([]byte(s), &x)
		return x, err
	}}
	region := decl{func(v any) (any, error) { return DecodeRegion(v) }, func(s string) (any, error) {
		var x Region
		err := json.Unmarshal([]byte(s), &x)
		return x, err
	}}
	for _, tc := range []struct {
		name string
		d    decl
		text string
		want string // "" when accepted
	}{
		{"state", state, `{"key":"orders.pending","description":"Orders waiting","identity":"function () { return count(\"pending\"); }"}`, ""},
		{"state identity", state, `{"key":"k","identity":{"n":[1.5,-0,1e300,null,true]}}`, ""},
		{"state null identity", state, `{"key":"k","identity":null}`, ""},
		{"state Key", state, `{"Key":"k"}`, `member "Key" is spelled "key"`},
		{"state number key", state, `{"key":1}`, "State.key: want a string"},
		{"state huge identity", state, `{"key":"k","identity":1e400}`, "State.identity: want a number within range"},
		{"guide", guide, `{"target":"help","label":"Help","identity":"markup"}`, ""},
		{"guide selector", guide, `{"target":"t","selector":"#x"}`, ""},
		{"guide Target", guide, `{"Target":"t"}`, `member "Target" is spelled "target"`},
		{"region", region, `{"id":"r","title":"Dialog","modal":true}`, ""},
		{"region ID", region, `{"ID":"r"}`, `member "ID" is spelled "id"`},
		{"region modal", region, `{"id":"r","modal":"yes"}`, "Region.modal: want a boolean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.d.decode(parse(t, tc.text))
			if wanterr.Check(t, "decode("+tc.text+")", err, tc.want) {
				return
			}
			want, err := tc.d.unmarshal(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-json.Unmarshal +generated):\n%s", diff)
			}
		})
	}
}

// FuzzDecodeConfig is the differential test of the generated decoder:
// what it reads, json.Unmarshal reads alike; what it refuses and
// json.Unmarshal reads has a member spelled in another case.
func FuzzDecodeConfig(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"expose":["a","*"],"anonymous":null,"keys":{"k":"v","n":null}}`,
		`{"rateLimit":{"describe":{"burst":1,"perSecond":0.5},"invoke":{}},"loop":{"repeats":3,"windowMs":1000}}`,
		`{"requireSession":true,"origin":"o","expectTimeoutMs":-1,"approvalTtlMs":1e3}`, `{"RateLimit":{}}`, `[1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsonvalue.Parse(data, 64)
		if err != nil || v == nil {
			// A configuration that is null is refused, where
			// json.Unmarshal leaves its value as it is; the shim
			// always sends an object.
			return
		}
		got, gerr := DecodeConfig(v)
		var want Config
		jerr := json.Unmarshal(data, &want)
		agrees(t, "DecodeConfig", data, want, jerr, got, gerr)
	})
}

// agrees fails a fuzz case where the generated decoder (name) and
// json.Unmarshal disagree on data: one reads what the other refuses, or
// both read it differently. The decoder may refuse what json.Unmarshal
// reads only for a member spelled in another case.
func agrees[T any](t *testing.T, name string, data []byte, want T, jerr error, got T, gerr error) {
	t.Helper()
	switch {
	case gerr == nil && jerr != nil:
		t.Fatalf("%s: read, json.Unmarshal refused: %v", data, jerr)
	case gerr == nil:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s (-json.Unmarshal +%s):\n%s", data, name, diff)
		}
	case jerr == nil && !strings.Contains(gerr.Error(), "is spelled"):
		t.Fatalf("%s: refused (%v), json.Unmarshal read it", data, gerr)
	}
}
