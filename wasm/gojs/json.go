package gojs

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON.parse and JSON.stringify: modules commonly move data across the
// boundary as JSON text (PLING's bridge does), so the environment provides
// them with JavaScript's observable behaviour — key order kept, numbers as
// float64, undefined and functions dropped by stringify.

func jsonParse(text string) (Value, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	v, err := jsonValue(dec)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("unexpected non-whitespace character after JSON")
		}
	}
	if err != nil {
		return nil, &Exception{newTypedError("SyntaxError", "JSON.parse: "+err.Error())}
	}
	return v, nil
}

func jsonValue(dec *json.Decoder) (Value, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = errors.New("unexpected end of JSON input")
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{class: classObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			a := &Array{Object: Object{class: "Array"}}
			for dec.More() {
				v, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				a.Elems = append(a.Elems, v)
			}
			_, err := dec.Token() // ']'
			return a, err
		}
		return nil, errors.New("unexpected " + t.String())
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	case string:
		return t, nil
	case bool:
		return t, nil
	case nil:
		return Null, nil
	}
	return nil, errors.New("unexpected token")
}

// jsonStringify is JSON.stringify(v, undefined, space).
func jsonStringify(v Value, space Value) (Value, error) {
	indent := ""
	switch s := space.(type) {
	case float64:
		indent = strings.Repeat(" ", max(0, min(10, int(toInt64(s)))))
	case string:
		indent = s
		if len(indent) > 10 {
			indent = indent[:10]
		}
	}
	w := &jsonWriter{indent: indent}
	ok, err := w.value(v, "")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil // undefined
	}
	return w.b.String(), nil
}

type jsonWriter struct {
	b      strings.Builder
	indent string
	stack  []*Object
}

// value writes v and reports whether it produced anything (undefined and
// functions produce nothing).
func (w *jsonWriter) value(v Value, cur string) (bool, error) {
	if o, ok := v.(*Object); ok && o.class == classDate {
		v = o.date.UTC().Format("2006-01-02T15:04:05.000Z") // Date.prototype.toJSON
	}
	switch v := v.(type) {
	case nil, *Function:
		return false, nil
	case NullValue:
		w.b.WriteString("null")
	case bool:
		w.b.WriteString(strconv.FormatBool(v))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			w.b.WriteString("null")
		} else {
			w.b.WriteString(NumberToString(v))
		}
	case string:
		writeJSONString(&w.b, v)
	default:
		h := header(v)
		if slices.Contains(w.stack, h) {
			return false, throwType("Converting circular structure to JSON")
		}
		w.stack = append(w.stack, h)
		defer func() { w.stack = w.stack[:len(w.stack)-1] }()
		inner := cur + w.indent
		if a, ok := v.(*Array); ok {
			w.b.WriteByte('[')
			for k, e := range a.Elems {
				if k > 0 {
					w.b.WriteByte(',')
				}
				w.newline(inner)
				ok, err := w.value(e, inner)
				if err != nil {
					return false, err
				}
				if !ok {
					w.b.WriteString("null")
				}
			}
			if len(a.Elems) > 0 {
				w.newline(cur)
			}
			w.b.WriteByte(']')
			return true, nil
		}
		type kv struct {
			k string
			v Value
		}
		var members []kv
		if u, ok := v.(*Uint8Array); ok {
			for k, e := range u.Data {
				members = append(members, kv{strconv.Itoa(k), float64(e)})
			}
		}
		for _, k := range h.Keys() {
			members = append(members, kv{k, h.Get(k)})
		}
		w.b.WriteByte('{')
		n := 0
		for _, m := range members {
			switch m.v.(type) {
			case nil, *Function:
				continue
			}
			if n > 0 {
				w.b.WriteByte(',')
			}
			n++
			w.newline(inner)
			writeJSONString(&w.b, m.k)
			w.b.WriteByte(':')
			if w.indent != "" {
				w.b.WriteByte(' ')
			}
			if _, err := w.value(m.v, inner); err != nil {
				return false, err
			}
		}
		if n > 0 {
			w.newline(cur)
		}
		w.b.WriteByte('}')
	}
	return true, nil
}

func (w *jsonWriter) newline(cur string) {
	if w.indent != "" {
		w.b.WriteByte('\n')
		w.b.WriteString(cur)
	}
}

// writeJSONString quotes s as JSON.stringify does: only '"', '\\' and
// control characters are escaped (Go's encoding/json also escapes <, >, &
// and U+2028/9, which JavaScript does not).
func writeJSONString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for k := 0; k < len(s); {
		c := s[k]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[k:])
			b.WriteRune(r)
			k += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
		k++
	}
	b.WriteByte('"')
}
