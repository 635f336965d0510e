package wire

import (
	"github.com/pling-go/pling/schema"

	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendDescription checks the generated describe-result encoder
// against schema.Encode on a description that uses every member.
func TestAppendDescription(t *testing.T) {
	no := false
	cases := map[string]schema.SurfaceDescription{
		"zero":        {},
		"empty lists": {Capabilities: []schema.SurfaceCapability{}, Truncated: &schema.Truncation{Reasons: []string{}}},
		"full": {Revision: "sha256:ab", Truncated: &schema.Truncation{Reasons: []string{"bytes", "records"}, OmittedCapabilities: 2},
			Capabilities: []schema.SurfaceCapability{{ID: "a", Title: "A", Risk: schema.RiskRead, InputSchema: schema.JSONSchema{Type: "object", AdditionalProperties: &no}},
				{ID: "b", Risk: schema.RiskWrite, Record: &schema.RecordTemplate{Kind: "k", Visible: []string{"x"}}}},
			Context: schema.SurfaceContext{Page: &schema.PageInfo{URL: "/"}, States: map[string]any{"n": 1.5}}},
	}
	for name, d := range cases {
		t.Run(name, func(t *testing.T) {
			want, werr := schema.Encode(d)
			got, gerr := AppendDescription(nil, &d)
			if werr != nil || gerr != nil {
				t.Fatalf("errors %v, schema.Encode's %v", gerr, werr)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("(-schema.Encode +AppendDescription):\n%s", diff)
			}
		})
	}
}

// FuzzAppendGenerated is the differential test of the generated encoders:
// whatever JSON text decodes into a describe or invoke result (numbers as
// float64 and as json.Number), the generated encoder writes byte for byte
// what encoding/json writes, or fails where it fails.
func FuzzAppendGenerated(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"revision":"r","capabilities":[{"id":"a","title":"<A>","risk":"read","inputSchema":{"type":"object","properties":{"p":{"type":"string","enum":["x",1,null],"minimum":1e-7,"maxLength":3,"items":{"default":{"b":[],"a":"\u2028"}}},"q":null},"required":["p"],"additionalProperties":false},"approval":true,"steps":2,"record":{"kind":"k","template":"t","total":3,"visible":["v"],"offscreen":1,"allowOffscreen":true,"truncated":true}}],"context":{"page":{"url":"/a&b","title":"T"},"regions":[{"id":"r","active":true,"modal":true}],"records":{"k":{"total":1,"items":[{"id":"i","label":"L","offscreen":true}],"truncated":true},"e":{"items":[]}},"states":{"s":1.50,"t":[true,"\u00ff"]},"feedback":[{"level":"info","message":"m"}],"unavailable":[{"id":"u","reason":"r","code":"C"}],"guides":[{"target":"g","label":"l"}]},"truncated":{"reasons":["bytes"],"omittedCapabilities":4}}`,
		`{"value":{"z":1e21,"a":[0.000001,-0]},"evidence":{"capability":"c","record":"r","records":["a"],"expectations":[{"state":"s","condition":"c","before":1,"after":"x","met":true}],"steps":1,"handoff":"h","approval":"a","summary":"s"},"error":{"code":"X","message":"m","details":{"k":null},"resume":"r"},"observation":{"states":{"b":{"before":null,"after":2}},"feedback":[],"navigation":{"from":"/a","to":"/b"},"capabilitiesChanged":true,"revision":"r","truncated":true}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, useNumber bool) {
		decode := func(v any) bool {
			dec := json.NewDecoder(bytes.NewReader(data))
			if useNumber {
				dec.UseNumber()
			}
			return dec.Decode(v) == nil
		}
		var d schema.SurfaceDescription
		if decode(&d) {
			compareGenerated(t, "AppendDescription", d, func() ([]byte, error) { return AppendDescription(nil, &d) })
		}
		var r schema.SurfaceInvokeResult
		if decode(&r) {
			compareGenerated(t, "AppendInvokeResult", r, func() ([]byte, error) { return AppendInvokeResult(nil, &r) })
		}
		var c schema.SurfaceCapability
		if decode(&c) {
			compareGenerated(t, "AppendCapability", c, func() ([]byte, error) { return AppendCapability(nil, &c) })
		}
	})
}

// compareGenerated checks a generated encoder's output against
// encoding/json's (SetEscapeHTML(false), no trailing newline).
func compareGenerated(t *testing.T, name string, v any, gen func() ([]byte, error)) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	werr := enc.Encode(v)
	want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	got, gerr := gen()
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", name, gerr, werr)
	}
	if werr == nil && !bytes.Equal(want, got) {
		t.Fatalf("%s (-encoding/json +generated):\n%s", name, cmp.Diff(string(want), string(got)))
	}
}
