// Package jsontree copies decoded JSON values (map[string]any, []any and
// scalars, as encoding/json decodes into any): one deep walk for the error
// registry's details and the conformance fixture's comparisons.
package jsontree

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
