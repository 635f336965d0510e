package jsonvalue

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// parser is a strict RFC 8259 parser for request text: one pass, no
// reflection, values as map[string]any, []any, string, json.Number, bool
// and nil (what encoding/json gives with UseNumber), duplicate keys and
// nesting beyond a bound refused. Request decoding is on every call's
// path; encoding/json's token API spent most of an invoke's time here.
// FuzzParse checks it against encoding/json.
type parser struct {
	data     []byte
	pos      int
	maxDepth int
}

var errSyntax = errors.New("syntax error")

// The errors of Parse that a request's rejection names (its
// details.reason); any other error is a syntax error.
var (
	ErrDuplicateKey = errors.New("duplicate key")
	ErrTooDeep      = errors.New("too deep")
	ErrTrailing     = errors.New("trailing data")
)

// Parse parses exactly one JSON value filling data (surrounding white
// space allowed) as the request parser does (objects as map[string]any,
// numbers as json.Number, duplicate keys refused), allowing nesting up to
// maxDepth. On text that encoding/json wrote it gives what a json.Decoder
// with UseNumber gives, without the decoder's reflection and buffers.
func Parse(data []byte, maxDepth int) (any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("jsonvalue: invalid UTF-8")
	}
	return parseDepth(data, maxDepth)
}

func parseDepth(data []byte, maxDepth int) (any, error) {
	p := parser{data: data, maxDepth: maxDepth}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.data) {
		return nil, ErrTrailing
	}
	return v, nil
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.pos >= len(p.data) {
		return nil, errSyntax
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		if depth >= p.maxDepth {
			return nil, ErrTooDeep
		}
		return p.object(depth)
	case c == '[':
		if depth >= p.maxDepth {
			return nil, ErrTooDeep
		}
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, errSyntax
}

func (p *parser) literal(s string) error {
	if len(p.data)-p.pos < len(s) || string(p.data[p.pos:p.pos+len(s)]) != s {
		return errSyntax
	}
	p.pos += len(s)
	return nil
}

func (p *parser) object(depth int) (any, error) {
	p.pos++ // {
	m := map[string]any{}
	err := p.list('}', func() error {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return errSyntax
		}
		k, err := p.string()
		if err != nil {
			return err
		}
		if _, dup := m[k]; dup {
			return ErrDuplicateKey
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return errSyntax
		}
		p.pos++
		p.space()
		v, err := p.value(depth + 1)
		m[k] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (p *parser) array(depth int) (any, error) {
	p.pos++ // [
	a := []any{}
	err := p.list(']', func() error {
		v, err := p.value(depth + 1)
		a = append(a, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// list reads an object's members or an array's elements, after its
// opening bracket, up to end, its closing one: one reads each member or
// element, white space before it skipped.
func (p *parser) list(end byte, one func() error) error {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == end {
		p.pos++
		return nil
	}
	for {
		p.space()
		if err := one(); err != nil {
			return err
		}
		p.space()
		if p.pos >= len(p.data) {
			return errSyntax
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case end:
			p.pos++
			return nil
		default:
			return errSyntax
		}
	}
}

// string reads a string at p.pos (which is '"'). The text was checked to be
// UTF-8 before parsing; a lone surrogate escape becomes U+FFFD, as
// encoding/json does (DecodeRequest refuses those first).
func (p *parser) string() (string, error) {
	p.pos++ // "
	start := p.pos
	// Fast path: no escapes. Eight bytes at a time while none of them is
	// '"', '\\' or a control character (tokens and ids are long plain runs).
	for p.pos+8 <= len(p.data) && plain8(binary.LittleEndian.Uint64(p.data[p.pos:])) {
		p.pos += 8
	}
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", errSyntax
		}
		p.pos++
	}
	buf := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", errSyntax
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		// An escape.
		if p.pos+1 >= len(p.data) {
			return "", errSyntax
		}
		e := p.data[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(p.data, p.pos)
			if !ok {
				return "", errSyntax
			}
			p.pos += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if p.pos+6 <= len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
					if x, ok := hex4(p.data, p.pos+2); ok {
						r2 = x
					}
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					p.pos += 6
					r = dec
				} else {
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", errSyntax
		}
	}
	return "", errSyntax
}

// number reads a number by the RFC 8259 grammar and keeps its text.
func (p *parser) number() (any, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos >= len(p.data) {
		return nil, errSyntax
	}
	if p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, errSyntax
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, errSyntax
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, errSyntax
		}
	}
	return json.Number(p.data[start:p.pos]), nil
}

// plain8 reports whether none of the eight bytes in x is '"', '\\' or below
// 0x20 (the classic "has a byte less than n" / "has a zero byte" tests).
// Bytes >= 0x80 count as plain: UTF-8 validity is checked before parsing.
func plain8(x uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	quote := x ^ (ones * '"')
	slash := x ^ (ones * '\\')
	hasZero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	less20 := (x - ones*0x20) &^ x & highs
	return hasZero(quote)|hasZero(slash)|less20 == 0
}

// HasLoneSurrogate reports a \uD800–\uDFFF escape that is not part of a
// high-low pair. encoding/json would silently turn one into U+FFFD; I-JSON
// (RFC 7493) forbids it, so a request that holds one is refused instead
// of altered.
func HasLoneSurrogate(data []byte) bool {
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(data) {
				return false // malformed; the parser reports it
			}
			if data[i+1] != 'u' {
				i++
				continue
			}
			r, ok := hex4(data, i+2)
			if !ok {
				return false
			}
			i += 5
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return true
			case r >= 0xD800 && r <= 0xDBFF:
				if i+6 >= len(data) || data[i+1] != '\\' || data[i+2] != 'u' {
					return true
				}
				lo, ok := hex4(data, i+3)
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return true
				}
				i += 6
			}
		}
	}
	return false
}

func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}
