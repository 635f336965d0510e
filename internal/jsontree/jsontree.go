// Package jsontree works on decoded JSON values (map[string]any, []any and
// scalars, as encoding/json decodes into any): one deep walk for the error
// registry's details and the conformance fixture's comparisons, and one
// reading of a number for the runtime's checks and the fixture's
// arithmetic.
package jsontree

import (
	"encoding/json"
	"reflect"
)

// Map copies v deeply, each scalar replaced by leaf(scalar); a nil leaf
// keeps scalars as they are. Nothing of the copy is shared with v.
func Map(v any, leaf func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Map(e, leaf)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Map(e, leaf)
		}
		return out
	}
	if leaf == nil {
		return v
	}
	return leaf(v)
}

// Number reads v as a number: a json.Number, a float64, or any other Go
// number a state reader may return. Anything else (nil, a string, a bool,
// an object, an array) is not one.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case nil, string, bool, map[string]any, []any:
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}
