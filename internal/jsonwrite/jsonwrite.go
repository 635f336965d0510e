// Package jsonwrite is the one writer of JSON value trees (nil, bool,
// string, map[string]any, []any) in the spellings Pling writes:
// encoding/json's (schema.Encode, schema.AppendValue, the generated JSON
// Schema, and with HTML escapes the error details' size cap) and RFC 8785's
// (canonical JSON, for digests). What they spell alike, the walk, the
// punctuation and the short escapes, is written once; where they differ the
// Spelling says which. Numbers and Go values are the caller's: each
// spelling writes them its own way.
package jsonwrite

import (
	"slices"
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// Other writes a value Append does not write itself: a number or any Go
// value that is not a tree of plain JSON values, in the caller's spelling.
type Other func(dst []byte, v any) ([]byte, error)

// A Spelling is one way of writing JSON.
type Spelling uint8

const (
	// GoJSON is encoding/json's spelling with SetEscapeHTML(false): strings
	// as Quote describes, keys in byte order, a nil map or slice as null.
	GoJSON Spelling = iota
	// GoJSONHTML is json.Marshal's: GoJSON with <, > and & escaped in
	// strings.
	GoJSONHTML
	// Canonical is RFC 8785's: strings as JSON.stringify writes them, keys
	// in the order of their UTF-16 code units (§3.2.3), and a nil map or
	// slice as {} or [] (JSON.stringify has no nil container).
	Canonical
)

// Append appends v compactly in the spelling sp. Values other than nil,
// bool, string, map[string]any and []any, at the top or inside, are
// written by other.
func Append(dst []byte, v any, sp Spelling, other Other) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return Quote(dst, x, sp), nil
	case map[string]any:
		if x == nil && sp != Canonical {
			return append(dst, "null"...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		if sp == Canonical {
			sortUTF16(keys)
		} else {
			slices.Sort(keys)
		}
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = Quote(dst, k, sp)
			dst = append(dst, ':')
			if dst, err = Append(dst, x[k], sp, other); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		if x == nil && sp != Canonical {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = Append(dst, e, sp, other); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	return other(dst, v)
}

// Quote appends s as a JSON string. In GoJSON and GoJSONHTML it is byte
// for byte what encoding/json writes (an Encoder with SetEscapeHTML(false);
// json.Marshal): the short escapes \" \\ \b \f \n \r \t, other control
// characters as \u00xx, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped, and in GoJSONHTML also <, > and &. In Canonical it is RFC 8785
// §3.2.2.2's (JSON.stringify's rules): the short escapes, other controls
// below U+0020 as \u00xx, everything else as itself in UTF-8 (U+2028 and
// U+2029 unescaped), and a byte that is not UTF-8 as U+FFFD itself, as
// encoding/json and every host's JSON decoder would read it.
func Quote(dst []byte, s string, sp Spelling) []byte {
	const hex = "0123456789abcdef"
	html, canonical := sp == GoJSONHTML, sp == Canonical
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!html || b != '<' && b != '>' && b != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			if canonical {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, `\ufffd`...)
			}
			i += size
			start = i
			continue
		}
		if !canonical && (r == '\u2028' || r == '\u2029') {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// sortUTF16 orders an object's keys by compareUTF16. It is sort.Slice, not
// slices.SortFunc: the module carries sort.Slice's one instance for every
// caller already, and slices.SortFunc on strings would add a copy of
// pdqsort of its own (19 KB of the module). Both are generated from one
// template (sort/gen_sort_variants.go) and compare and swap the same
// elements in the same order, so the keys come out alike.
func sortUTF16(keys []string) {
	sort.Slice(keys, func(i, j int) bool { return compareUTF16(keys[i], keys[j]) < 0 })
}

// compareUTF16 orders strings by their UTF-16 code units (RFC 8785 §3.2.3).
// Go's string order is UTF-8 byte order, which is code point order; the two
// differ only where a character beyond the BMP (a surrogate pair, 0xD800 to
// 0xDFFF) meets one from U+E000 to U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmpUnit(firstUnit(ra), firstUnit(rb), ra, rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

func cmpUnit(ua, ub, ra, rb rune) int {
	if ua != ub {
		return int(ua - ub)
	}
	// Two characters beyond the BMP with the same high surrogate: their
	// low surrogates are in the order of the characters.
	return int(ra - rb)
}
