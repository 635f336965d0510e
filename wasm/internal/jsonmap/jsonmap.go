// Package jsonmap reads what schema.ParseValue gives (map[string]any,
// []any, json.Number, string, bool, nil) into Go values exactly as
// json.Unmarshal would read the same text into a struct, for the cases
// where that is simple: each helper reports false whenever
// json.Unmarshal could do something else (a key that only matches a
// field case-insensitively in a non-ASCII way, two keys for one field, a
// null, a value of another type), and the caller then takes
// json.Unmarshal's way. It keeps encoding/json's reflection off a page's
// first describe.
package jsonmap

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pling-go/pling/schema"
)

// Fields maps the keys of obj to fields named names (a struct's json
// names, or its Go field names when it has no tags), as json.Unmarshal
// matches them: exactly or case-insensitively. vals[i] is the value of
// names[i], nil when absent; other keys are ignored. It reports false
// when obj is not an object, a value is null, two keys match one field,
// or a key is not ASCII (encoding/json folds a few non-ASCII letters,
// such as the Kelvin sign, into ASCII ones).
func Fields(obj any, names ...string) (vals []any, ok bool) {
	m, isMap := obj.(map[string]any)
	if !isMap {
		return nil, false
	}
	vals = make([]any, len(names))
	for k, v := range m {
		if !ascii(k) {
			return nil, false
		}
		for i, n := range names {
			if !equalFold(k, n) {
				continue
			}
			if v == nil || vals[i] != nil {
				return nil, false
			}
			vals[i] = v
			break
		}
	}
	return vals, true
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// equalFold compares ASCII strings ignoring the case of letters, as
// encoding/json's field matching does for them.
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// String reads a string field; absent (nil) is "".
func String(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	}
	return "", false
}

// Bool reads a bool field; absent is false.
func Bool(v any) (bool, bool) {
	switch x := v.(type) {
	case nil:
		return false, true
	case bool:
		return x, true
	}
	return false, false
}

// BoolPtr reads a *bool field; absent is nil.
func BoolPtr(v any) (*bool, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case bool:
		return &x, true
	}
	return nil, false
}

// Int64 reads an int64 field (an integer literal in range); absent is 0.
func Int64(v any) (int64, bool) {
	switch x := v.(type) {
	case nil:
		return 0, true
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// IntPtr reads an *int field; absent is nil.
func IntPtr(v any) (*int, bool) {
	if v == nil {
		return nil, true
	}
	x, isNum := v.(json.Number)
	if !isNum {
		return nil, false
	}
	n, err := strconv.ParseInt(string(x), 10, strconv.IntSize)
	if err != nil {
		return nil, false
	}
	i := int(n)
	return &i, true
}

// Float64Ptr reads a *float64 field; absent is nil.
func Float64Ptr(v any) (*float64, bool) {
	if v == nil {
		return nil, true
	}
	x, isNum := v.(json.Number)
	if !isNum {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(x), 64)
	if err != nil {
		return nil, false
	}
	return &f, true
}

// Any reads a field typed any: numbers become float64 (json.Unmarshal
// does not use json.Number there). Objects and arrays are converted in
// place. Absent is nil.
func Any(v any) (any, bool) {
	switch x := v.(type) {
	case nil, string, bool:
		return x, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case map[string]any:
		for k, e := range x {
			c, ok := Any(e)
			if !ok {
				return nil, false
			}
			x[k] = c
		}
		return x, true
	case []any:
		for i, e := range x {
			c, ok := Any(e)
			if !ok {
				return nil, false
			}
			x[i] = c
		}
		return x, true
	}
	return nil, false
}

// AnySlice reads a field typed []any; absent is nil.
func AnySlice(v any) ([]any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case []any:
		c, ok := Any(x)
		if !ok {
			return nil, false
		}
		return c.([]any), true
	}
	return nil, false
}

// Row is one record a page's records reader returns.
type Row struct {
	ID      string `json:"id"`
	Label   string `json:"label"`
	Visible *bool  `json:"visible"`
}

// Rows decodes a records reader's JSON as json.Unmarshal into []Row
// does: by scanning JSON.stringify's spelling of plain rows, else with the
// one-pass parser when every row is an object of strings and booleans,
// else with json.Unmarshal.
func Rows(text string) ([]Row, error) {
	if rows, ok := scanRows(text); ok {
		return rows, nil
	}
	data := []byte(text)
	if rows, ok := fastRows(data); ok {
		return rows, nil
	}
	var rows []Row
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// scanRows reads the rows as JSON.stringify writes them when they are
// plain: [{"id":"…","label":"…","visible":true},…], each key at most once,
// strings without escapes or control characters, no white space. The
// strings are slices of text. Anything else reports false.
func scanRows(text string) ([]Row, bool) {
	s := text
	if len(s) < 2 || s[0] != '[' || !utf8.ValidString(s) {
		return nil, false
	}
	rows := make([]Row, 0, strings.Count(s, "{"))
	i := 1
	if s[i] == ']' {
		return rows, len(s) == 2
	}
	for {
		if i >= len(s) || s[i] != '{' {
			return nil, false
		}
		i++
		var r Row
		var seen [3]bool
		if i < len(s) && s[i] == '}' {
			i++
		} else {
			for {
				key, j, ok := PlainString(s, i)
				if !ok || j >= len(s) || s[j] != ':' {
					return nil, false
				}
				i = j + 1
				switch key {
				case "id", "label":
					k := 0
					if key == "label" {
						k = 1
					}
					v, j, ok := PlainString(s, i)
					if !ok || seen[k] {
						return nil, false
					}
					seen[k] = true
					if k == 0 {
						r.ID = v
					} else {
						r.Label = v
					}
					i = j
				case "visible":
					var b bool
					switch {
					case strings.HasPrefix(s[i:], "true"):
						b, i = true, i+4
					case strings.HasPrefix(s[i:], "false"):
						b, i = false, i+5
					default:
						return nil, false
					}
					if seen[2] {
						return nil, false
					}
					seen[2] = true
					r.Visible = &b
				default:
					return nil, false
				}
				if i >= len(s) {
					return nil, false
				}
				if s[i] == ',' {
					i++
					continue
				}
				if s[i] != '}' {
					return nil, false
				}
				i++
				break
			}
		}
		rows = append(rows, r)
		if i >= len(s) {
			return nil, false
		}
		if s[i] == ']' {
			return rows, i+1 == len(s)
		}
		if s[i] != ',' {
			return nil, false
		}
		i++
	}
}

// PlainString reads a JSON string at s[i] that has no escapes and no
// control characters, and returns it and the index after its closing
// quote.
func PlainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}

func fastRows(data []byte) ([]Row, bool) {
	v, err := schema.ParseValue(data, 64)
	if err != nil {
		return nil, false
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, false
	}
	rows := make([]Row, len(arr))
	for i, e := range arr {
		f, ok := Fields(e, "id", "label", "visible")
		if !ok {
			return nil, false
		}
		r := &rows[i]
		var ok1, ok2, ok3 bool
		r.ID, ok1 = String(f[0])
		r.Label, ok2 = String(f[1])
		r.Visible, ok3 = BoolPtr(f[2])
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
	}
	return rows, true
}

// Strings reads a []string field; absent is nil.
func Strings(v any) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, false
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, isStr := e.(string)
		if !isStr {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// StringMap reads a map[string]string field; absent is nil.
func StringMap(v any) (map[string]string, bool) {
	if v == nil {
		return nil, true
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, isStr := e.(string)
		if !isStr {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}
