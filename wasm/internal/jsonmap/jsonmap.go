// Package jsonmap reads the rows a page's records reader returns (Rows):
// by scanning JSON.stringify's spelling when they are plain, else with
// the one-pass parser and the decoder generated for pagespec.Row, by the
// exact json names (a member spelled in another case is refused).
package jsonmap

import (
	"strings"
	"unicode/utf8"

	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/schema/pagespec"
)

// Row is one record a page's records reader returns.
type Row = pagespec.Row

// rowsDepth is the deepest nesting Rows reads: encoding/json's own bound,
// which read the rows before.
const rowsDepth = 10000

// Rows decodes a records reader's JSON: an array of rows, or null for
// none. Plain rows are scanned as JSON.stringify writes them; other text
// is parsed and read by pagespec.DecodeRows.
func Rows(text string) ([]Row, error) {
	if rows, ok := scanRows(text); ok {
		return rows, nil
	}
	v, err := jsonvalue.Parse([]byte(text), rowsDepth)
	if err != nil {
		return nil, err
	}
	return pagespec.DecodeRows(v)
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
