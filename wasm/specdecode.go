//go:build js && wasm

package main

import (
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
	"github.com/pling-go/pling/wasm/internal/jsonmap"
)

// What a page sends as JSON text, read without encoding/json's reflection.
// The configuration and the state, guide, region and records declarations
// go through decodeSpec and the decoders generated in package pagespec.
// An action's JSON is read with the one-pass parser and jsonmap, as
// json.Unmarshal reads it into actionSpec. Each decodeFast reports
// false when its text is anything jsonmap does not read exactly as
// json.Unmarshal would (a null, an odd key, a wrong type, an expect's
// equals); declare then takes json.Unmarshal's way, errors included.
// This keeps encoding/json's reflection off a page's first describe.

// specDepth bounds the nesting the fast path reads; deeper text takes
// json.Unmarshal's way.
const specDepth = 64

// decodeSpecDepth is the deepest nesting decodeSpec reads: encoding/json's
// own bound, so what json.Unmarshal read before is still read.
const decodeSpecDepth = 10000

func parseSpec(text string) (any, bool) {
	v, err := schema.ParseValue([]byte(text), specDepth)
	return v, err == nil
}

func (a *actionSpec) decodeFast(text string) bool {
	v, ok := parseSpec(text)
	if !ok {
		return false
	}
	f, ok := jsonmap.Fields(v, "id", "title", "description", "params", "risk", "expect", "steps", "handoff", "approval", "region", "record", "identity")
	if !ok {
		return false
	}
	var risk string
	var oks []bool
	var o bool
	a.ID, o = jsonmap.String(f[0])
	oks = append(oks, o)
	a.Title, o = jsonmap.String(f[1])
	oks = append(oks, o)
	a.Description, o = jsonmap.String(f[2])
	oks = append(oks, o)
	a.Params, o = paramsFast(f[3])
	oks = append(oks, o)
	risk, o = jsonmap.String(f[4])
	a.Risk = schema.Risk(risk)
	oks = append(oks, o)
	a.Expect, o = expectFast(f[5])
	oks = append(oks, o)
	if f[6] != nil {
		steps, isArr := f[6].([]any)
		if !isArr {
			return false
		}
		a.Steps = make([]struct {
			Title  string      `json:"title"`
			Expect *expectSpec `json:"expect"`
		}, len(steps))
		for i, s := range steps {
			sf, ok := jsonmap.Fields(s, "title", "expect")
			if !ok {
				return false
			}
			a.Steps[i].Title, o = jsonmap.String(sf[0])
			oks = append(oks, o)
			a.Steps[i].Expect, o = expectFast(sf[1])
			oks = append(oks, o)
		}
	}
	if f[7] != nil {
		hf, ok := jsonmap.Fields(f[7], "prompt", "timeoutMs")
		if !ok {
			return false
		}
		a.Handoff = &struct {
			Prompt    string `json:"prompt"`
			TimeoutMs int64  `json:"timeoutMs"`
		}{}
		a.Handoff.Prompt, o = jsonmap.String(hf[0])
		oks = append(oks, o)
		a.Handoff.TimeoutMs, o = jsonmap.Int64(hf[1])
		oks = append(oks, o)
	}
	a.Approval, o = jsonmap.Bool(f[8])
	oks = append(oks, o)
	a.Region, o = jsonmap.String(f[9])
	oks = append(oks, o)
	if f[10] != nil {
		rf, ok := jsonmap.Fields(f[10], "Kind", "ID", "AllowOffscreen")
		if !ok {
			return false
		}
		a.Record = &runtime.RecordRef{}
		a.Record.Kind, o = jsonmap.String(rf[0])
		oks = append(oks, o)
		a.Record.ID, o = jsonmap.String(rf[1])
		oks = append(oks, o)
		a.Record.AllowOffscreen, o = jsonmap.Bool(rf[2])
		oks = append(oks, o)
	}
	a.Identity, o = jsonmap.Any(f[11])
	oks = append(oks, o)
	return allTrue(oks[:])
}

// expectFast reads an expect object; one with an equals (kept as raw
// JSON text) is left to json.Unmarshal.
func expectFast(v any) (*expectSpec, bool) {
	if v == nil {
		return nil, true
	}
	f, ok := jsonmap.Fields(v, "state", "change", "equals", "timeoutMs")
	if !ok || f[2] != nil {
		return nil, false
	}
	e := &expectSpec{}
	var ok1, ok2, ok3 bool
	e.State, ok1 = jsonmap.String(f[0])
	e.Change, ok2 = jsonmap.String(f[1])
	e.TimeoutMs, ok3 = jsonmap.Int64(f[3])
	return e, ok1 && ok2 && ok3
}

func paramsFast(v any) (map[string]runtime.Param, bool) {
	if v == nil {
		return nil, true
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, false
	}
	out := make(map[string]runtime.Param, len(m))
	for k, pv := range m {
		var p runtime.Param
		if !paramFast(pv, &p) {
			return nil, false
		}
		out[k] = p
	}
	return out, true
}

func paramFast(v any, p *runtime.Param) bool {
	f, ok := jsonmap.Fields(v, "type", "required", "description", "enum", "minimum", "maximum",
		"minLength", "maxLength", "pattern", "items", "minItems", "maxItems", "default")
	if !ok {
		return false
	}
	var oks [13]bool
	p.Type, oks[0] = jsonmap.String(f[0])
	p.Required, oks[1] = jsonmap.Bool(f[1])
	p.Description, oks[2] = jsonmap.String(f[2])
	p.Enum, oks[3] = jsonmap.AnySlice(f[3])
	p.Minimum, oks[4] = jsonmap.Float64Ptr(f[4])
	p.Maximum, oks[5] = jsonmap.Float64Ptr(f[5])
	p.MinLength, oks[6] = jsonmap.IntPtr(f[6])
	p.MaxLength, oks[7] = jsonmap.IntPtr(f[7])
	p.Pattern, oks[8] = jsonmap.String(f[8])
	oks[9] = true
	if f[9] != nil {
		p.Items = &runtime.Param{}
		oks[9] = paramFast(f[9], p.Items)
	}
	p.MinItems, oks[10] = jsonmap.IntPtr(f[10])
	p.MaxItems, oks[11] = jsonmap.IntPtr(f[11])
	p.Default, oks[12] = jsonmap.Any(f[12])
	return allTrue(oks[:])
}

// decodeSpec reads what a page sends as JSON text (its configuration, a
// state, guide, region or records declaration) with the decoder
// generated for its type in package pagespec: by the exact json names, a
// member spelled in another case refused (RATIONALE.md "How does the
// module read a page's configuration?").
func decodeSpec[T any](text string, decode func(any) (T, error)) (T, error) {
	v, err := schema.ParseValue([]byte(text), decodeSpecDepth)
	if err != nil {
		var zero T
		return zero, err
	}
	return decode(v)
}

// allTrue reports whether every field was read.
func allTrue(oks []bool) bool {
	for _, o := range oks {
		if !o {
			return false
		}
	}
	return true
}
