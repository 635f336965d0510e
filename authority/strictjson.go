package authority

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
)

// unambiguous reports whether body is JSON whose meaning no reader can
// take differently from encoding/json's: no object anywhere names a key
// twice (encoding/json keeps the last, other parsers the first), and, when
// v is a struct, every top-level key is one of its JSON field names
// spelled exactly (encoding/json also accepts "POLLSECRET" or "pollſecret"
// for pollSecret, and lets the last of them win). The body is capped
// before this runs, which bounds the depth it walks.
func unambiguous(body []byte, v any) bool {
	names := fieldNames(v)
	d := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		obj  bool
		keys map[string]struct{}
		key  bool // the next token of an object is a key
	}
	var stack []frame
	for {
		t, err := d.Token()
		if err == io.EOF {
			return len(stack) == 0
		}
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].obj {
			top := &stack[n-1]
			if top.key {
				if dl, ok := t.(json.Delim); ok && dl == '}' {
					stack = stack[:n-1]
					continue
				}
				k, _ := t.(string)
				if _, dup := top.keys[k]; dup {
					return false
				}
				top.keys[k] = struct{}{}
				if n == 1 && names != nil {
					if _, ok := names[k]; !ok {
						return false
					}
				}
				top.key = false
				continue
			}
			top.key = true
		}
		switch t {
		case json.Delim('{'):
			stack = append(stack, frame{obj: true, keys: map[string]struct{}{}, key: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// fieldNames is the set of JSON names of v's struct fields (nil when v is
// not a pointer to a struct).
func fieldNames(v any) map[string]struct{} {
	rt := reflect.TypeOf(v)
	if rt == nil || rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return nil
	}
	rt = rt.Elem()
	out := make(map[string]struct{}, rt.NumField())
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = struct{}{}
	}
	return out
}
