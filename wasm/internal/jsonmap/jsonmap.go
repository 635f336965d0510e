// Package jsonmap reads the rows a page's records reader returns (Rows)
// exactly as json.Unmarshal would read the same text into []Row, without
// its reflection when the rows are plain: each helper reports false
// whenever json.Unmarshal could do something else (a key that only
// matches a field case-insensitively in a non-ASCII way, two keys for one
// field, a null, a value of another type), and Rows then takes
// json.Unmarshal's way. Declarations are not read here: they have
// decoders generated from their types in package schema/pagespec.
package jsonmap

import (
	"encoding/json"
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
