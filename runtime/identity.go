package runtime

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/pling-go/pling/internal/jsonvalue"
)

// actionShapeValue is the value actionShape digests, built as the
// map[string]any, []any, string, json.Number, bool and nil that canon
// makes of the structs in it by encoding them with encoding/json and
// parsing the result, without that round trip (encoding/json's
// reflection was most of a page's first declarations). It reports false
// when a value in those structs might not come back the same way (a
// string that is not UTF-8, a number that is not finite, a value typed
// any that is not plain JSON); actionShape then takes canon's way.
func actionShapeValue(a *Action) (map[string]any, bool) {
	params := make(map[string]any, len(a.Params))
	for k, p := range a.Params {
		ps, ok := paramShapeValue(&p)
		if !ok {
			return nil, false
		}
		params[k] = ps
	}
	expect, ok := expectShapeValue(a.Expect)
	if !ok {
		return nil, false
	}
	steps := make([]any, len(a.Steps))
	for i, s := range a.Steps {
		if !utf8.ValidString(s.Title) {
			return nil, false
		}
		st := map[string]any{"run": s.Run != nil}
		if s.Title != "" {
			st["title"] = s.Title
		}
		e, ok := expectShapeValue(s.Expect)
		if !ok {
			return nil, false
		}
		if e != nil {
			st["expect"] = e
		}
		steps[i] = st
	}
	var handoff any
	if h := a.Handoff; h != nil {
		if !utf8.ValidString(h.Prompt) {
			return nil, false
		}
		handoff = map[string]any{"Prompt": h.Prompt, "TimeoutMs": int64Number(h.TimeoutMs)}
	}
	var rec any
	if a.Record != nil {
		rec = map[string]any{"kind": a.Record.Kind, "allowOffscreen": a.Record.AllowOffscreen}
	}
	risk := string(riskOf(a)) // canon writes a schema.Risk by encoding/json
	if !utf8.ValidString(risk) {
		return nil, false
	}
	var exp any
	if expect != nil {
		exp = expect
	}
	return map[string]any{
		"id": a.ID, "title": a.Title, "description": a.Description,
		"params": params, "risk": risk, "available": a.Available != nil,
		"run": a.Run != nil, "expect": exp, "steps": steps,
		"handoff": handoff, "approval": a.Approval, "region": a.Region, "record": rec,
		"identity": a.Identity,
	}, true
}

// expectShapeValue is expectShape as encoding/json writes it and canon
// reads it back; nil for no expectation.
func expectShapeValue(e *Expectation) (map[string]any, bool) {
	if e == nil {
		return nil, true
	}
	if !utf8.ValidString(e.State) || !utf8.ValidString(e.Change) {
		return nil, false
	}
	m := map[string]any{"state": e.State}
	if e.Change != "" {
		m["change"] = e.Change
	}
	if e.Equals != nil && !putPlain(m, "equals", e.Equals) {
		return nil, false
	}
	if e.HasEquals {
		m["hasEquals"] = true
	}
	if e.Predicate != nil {
		m["predicate"] = true
	}
	if e.TimeoutMs != 0 {
		m["timeoutMs"] = int64Number(e.TimeoutMs)
	}
	return m, true
}

// paramShapeValue is propertySchema(p) as encoding/json writes it and
// canon reads it back.
func paramShapeValue(p *Param) (map[string]any, bool) {
	if !utf8.ValidString(p.Type) || !utf8.ValidString(p.Description) || !utf8.ValidString(p.Pattern) {
		return nil, false
	}
	m := map[string]any{}
	if p.Type != "" {
		m["type"] = p.Type
	}
	if p.Description != "" {
		m["description"] = p.Description
	}
	if len(p.Enum) > 0 && !putPlain(m, "enum", p.Enum) {
		return nil, false
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"minimum", p.Minimum}, {"maximum", p.Maximum}} {
		if f.v == nil {
			continue
		}
		if math.IsNaN(*f.v) || math.IsInf(*f.v, 0) {
			return nil, false
		}
		m[f.name] = *f.v
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"minLength", p.MinLength}, {"maxLength", p.MaxLength}, {"minItems", p.MinItems}, {"maxItems", p.MaxItems}} {
		if f.v != nil {
			m[f.name] = int64Number(int64(*f.v))
		}
	}
	if p.Pattern != "" {
		m["pattern"] = p.Pattern
	}
	if p.Items != nil {
		it, ok := paramShapeValue(p.Items)
		if !ok {
			return nil, false
		}
		m["items"] = it
	}
	if p.Default != nil && !putPlain(m, "default", p.Default) {
		return nil, false
	}
	return m, true
}

func int64Number(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// plainJSON returns v, when it is a JSON value canon writes the same
// whether or not encoding/json encodes it first: nil, a bool, a UTF-8
// string, a finite float64, a json.Number spelled as JSON, or a
// non-nil map[string]any or []any of those (with UTF-8 keys).
func plainJSON(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool:
		return x, true
	case string:
		return x, utf8.ValidString(x)
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case json.Number:
		n, err := jsonvalue.Parse([]byte(x), 0)
		return x, err == nil && n == any(x)
	case map[string]any:
		if x == nil {
			return nil, false // encoding/json writes null, canon {}
		}
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, false
			}
			if _, ok := plainJSON(e); !ok {
				return nil, false
			}
		}
		return x, true
	case []any:
		if x == nil {
			return nil, false // encoding/json writes null, canon []
		}
		for _, e := range x {
			if _, ok := plainJSON(e); !ok {
				return nil, false
			}
		}
		return x, true
	}
	return nil, false
}

// putPlain sets m[key] to v as plainJSON reads it, and reports false when
// it cannot read it.
func putPlain(m map[string]any, key string, v any) bool {
	p, ok := plainJSON(v)
	if ok {
		m[key] = p
	}
	return ok
}
