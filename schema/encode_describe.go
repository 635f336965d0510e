package schema

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
)

// The describe response's hot types written by hand, byte for byte as
// Encode writes them (TestAppendDescribe checks them against Encode): a
// page's first describe otherwise builds encoding/json's reflection
// encoders for each of these types, and the engine compiles that code on
// its first run. Values typed any take Encode's way unless they are plain
// JSON (nil, strings, bools, json.Numbers, finite float64s, and maps and
// slices of those).

// AppendCapability appends the JSON of c as Encode writes it.
func AppendCapability(dst []byte, c *SurfaceCapability) ([]byte, error) {
	var err error
	dst = append(dst, `{"id":`...)
	dst = AppendQuoted(dst, c.ID, false)
	dst = append(dst, `,"title":`...)
	dst = AppendQuoted(dst, c.Title, false)
	if c.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = AppendQuoted(dst, c.Description, false)
	}
	dst = append(dst, `,"risk":`...)
	dst = AppendQuoted(dst, string(c.Risk), false)
	dst = append(dst, `,"inputSchema":{"type":`...)
	s := &c.InputSchema
	dst = AppendQuoted(dst, s.Type, false)
	if len(s.Properties) > 0 {
		dst = append(dst, `,"properties":{`...)
		for i, k := range slices.Sorted(maps.Keys(s.Properties)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendQuoted(dst, k, false)
			dst = append(dst, ':')
			if dst, err = appendProperty(dst, s.Properties[k]); err != nil {
				return nil, err
			}
		}
		dst = append(dst, '}')
	}
	if len(s.Required) > 0 {
		dst = append(dst, `,"required":`...)
		dst = appendStrings(dst, s.Required)
	}
	if s.AdditionalProperties != nil {
		dst = append(dst, `,"additionalProperties":`...)
		dst = strconv.AppendBool(dst, *s.AdditionalProperties)
	}
	dst = append(dst, '}')
	if c.Approval {
		dst = append(dst, `,"approval":true`...)
	}
	if c.Handoff {
		dst = append(dst, `,"handoff":true`...)
	}
	if c.Steps != 0 {
		dst = append(dst, `,"steps":`...)
		dst = strconv.AppendInt(dst, int64(c.Steps), 10)
	}
	if c.Record != nil {
		dst = append(dst, `,"record":`...)
		dst = AppendRecordTemplate(dst, c.Record)
	}
	return append(dst, '}'), nil
}

func appendProperty(dst []byte, p *PropertySchema) ([]byte, error) {
	if p == nil {
		return append(dst, "null"...), nil
	}
	var err error
	dst = append(dst, '{')
	first := true
	if p.Type != "" {
		dst = appendKey(dst, &first, "type")
		dst = AppendQuoted(dst, p.Type, false)
	}
	if p.Description != "" {
		dst = appendKey(dst, &first, "description")
		dst = AppendQuoted(dst, p.Description, false)
	}
	if len(p.Enum) > 0 {
		dst = appendKey(dst, &first, "enum")
		if dst, err = AppendValue(dst, p.Enum); err != nil {
			return nil, err
		}
	}
	for _, f := range [...]struct {
		name string
		v    *float64
	}{{"minimum", p.Minimum}, {"maximum", p.Maximum}} {
		if f.v != nil {
			dst = appendKey(dst, &first, f.name)
			if dst, err = appendFloat(dst, *f.v); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range [...]struct {
		name string
		v    *int
	}{{"minLength", p.MinLength}, {"maxLength", p.MaxLength}} {
		if f.v != nil {
			dst = appendKey(dst, &first, f.name)
			dst = strconv.AppendInt(dst, int64(*f.v), 10)
		}
	}
	if p.Pattern != "" {
		dst = appendKey(dst, &first, "pattern")
		dst = AppendQuoted(dst, p.Pattern, false)
	}
	if p.Items != nil {
		dst = appendKey(dst, &first, "items")
		if dst, err = appendProperty(dst, p.Items); err != nil {
			return nil, err
		}
	}
	for _, f := range [...]struct {
		name string
		v    *int
	}{{"minItems", p.MinItems}, {"maxItems", p.MaxItems}} {
		if f.v != nil {
			dst = appendKey(dst, &first, f.name)
			dst = strconv.AppendInt(dst, int64(*f.v), 10)
		}
	}
	if p.Default != nil {
		dst = appendKey(dst, &first, "default")
		if dst, err = AppendValue(dst, p.Default); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// AppendRecordTemplate appends the JSON of t as Encode writes it.
func AppendRecordTemplate(dst []byte, t *RecordTemplate) []byte {
	dst = append(dst, `{"kind":`...)
	dst = AppendQuoted(dst, t.Kind, false)
	dst = append(dst, `,"template":`...)
	dst = AppendQuoted(dst, t.Template, false)
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, int64(t.Total), 10)
	dst = append(dst, `,"visible":`...)
	if t.Visible == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendStrings(dst, t.Visible)
	}
	dst = append(dst, `,"offscreen":`...)
	dst = strconv.AppendInt(dst, int64(t.Offscreen), 10)
	if t.AllowOffscreen {
		dst = append(dst, `,"allowOffscreen":true`...)
	}
	if t.Truncated {
		dst = append(dst, `,"truncated":true`...)
	}
	return append(dst, '}')
}

// AppendContext appends the JSON of c as Encode writes it.
func AppendContext(dst []byte, c *SurfaceContext) ([]byte, error) {
	var err error
	dst = append(dst, '{')
	first := true
	if p := c.Page; p != nil {
		dst = appendKey(dst, &first, "page")
		dst = appendStringFields(dst, "url", p.URL, "title", p.Title)
	}
	if len(c.Regions) > 0 {
		dst = appendKey(dst, &first, "regions")
		for i, r := range c.Regions {
			dst = appendSep(dst, i)
			dst = append(dst, `{"id":`...)
			dst = AppendQuoted(dst, r.ID, false)
			if r.Title != "" {
				dst = append(dst, `,"title":`...)
				dst = AppendQuoted(dst, r.Title, false)
			}
			dst = append(dst, `,"active":`...)
			dst = strconv.AppendBool(dst, r.Active)
			if r.Modal {
				dst = append(dst, `,"modal":true`...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(c.Records) > 0 {
		dst = appendKey(dst, &first, "records")
		dst = append(dst, '{')
		for i, k := range slices.Sorted(maps.Keys(c.Records)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendQuoted(dst, k, false)
			rs := c.Records[k]
			dst = append(dst, `:{"total":`...)
			dst = strconv.AppendInt(dst, int64(rs.Total), 10)
			dst = append(dst, `,"items":`...)
			if rs.Items == nil {
				dst = append(dst, "null"...)
			} else {
				for j, it := range rs.Items {
					dst = appendSep(dst, j)
					dst = append(dst, `{"id":`...)
					dst = AppendQuoted(dst, it.ID, false)
					if it.Label != "" {
						dst = append(dst, `,"label":`...)
						dst = AppendQuoted(dst, it.Label, false)
					}
					if it.Offscreen {
						dst = append(dst, `,"offscreen":true`...)
					}
					dst = append(dst, '}')
				}
				if len(rs.Items) == 0 {
					dst = append(dst, '[')
				}
				dst = append(dst, ']')
			}
			if rs.Truncated {
				dst = append(dst, `,"truncated":true`...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	if len(c.States) > 0 {
		dst = appendKey(dst, &first, "states")
		if dst, err = AppendValue(dst, c.States); err != nil {
			return nil, err
		}
	}
	if len(c.Feedback) > 0 {
		dst = appendKey(dst, &first, "feedback")
		dst = appendFeedback(dst, c.Feedback)
	}
	if len(c.Unavailable) > 0 {
		dst = appendKey(dst, &first, "unavailable")
		for i, u := range c.Unavailable {
			dst = appendSep(dst, i)
			dst = append(dst, `{"id":`...)
			dst = AppendQuoted(dst, u.ID, false)
			if u.Reason != "" {
				dst = append(dst, `,"reason":`...)
				dst = AppendQuoted(dst, u.Reason, false)
			}
			if u.Code != "" {
				dst = append(dst, `,"code":`...)
				dst = AppendQuoted(dst, u.Code, false)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(c.Guides) > 0 {
		dst = appendKey(dst, &first, "guides")
		for i, g := range c.Guides {
			dst = appendSep(dst, i)
			dst = append(dst, `{"target":`...)
			dst = AppendQuoted(dst, g.Target, false)
			if g.Label != "" {
				dst = append(dst, `,"label":`...)
				dst = AppendQuoted(dst, g.Label, false)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

// appendSep opens an array before its first element and separates the
// others.
func appendSep(dst []byte, i int) []byte {
	if i == 0 {
		return append(dst, '[')
	}
	return append(dst, ',')
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendQuoted(dst, s, false)
	}
	return append(dst, ']')
}

// AppendValue appends v as Encode writes it: plain JSON values by hand,
// anything else by Encode.
func AppendValue(dst []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return AppendQuoted(dst, x, false), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case Compact:
		return append(dst, x...), nil
	case json.Number:
		// Encode writes a valid number as it is spelled ("" as 0) and
		// refuses an invalid one.
		if n, err := ParseValue([]byte(x), 0); err == nil && n == any(x) {
			return append(dst, x...), nil
		}
	case float64:
		return appendFloat(dst, x)
	case map[string]any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendQuoted(dst, k, false)
			dst = append(dst, ':')
			if dst, err = AppendValue(dst, x[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = AppendValue(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	b, err := Encode(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

var errNotFinite = errors.New("json: unsupported value: a float that is not finite")

// appendFloat writes a float64 as encoding/json does (ES6 number
// formatting: %f between 1e-6 and 1e21, else %e without a leading zero
// in the exponent); NaN and infinities are errors.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if _, err := Encode(f); err != nil {
			return nil, err
		}
		return nil, errNotFinite
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}
