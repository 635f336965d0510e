package jsonwrite

import (
	"encoding/json"
	"testing"

	"github.com/pling-go/pling/internal/testing/jsontrees"
)

// TestAppendGoJSON: with encoding/json writing what the walk leaves to it
// (numbers, Go values), Append in GoJSON writes every tree of the shared
// table as encoding/json does. canon.TestTrees, schema.TestTrees and
// errors.TestEncodeAsMarshal check the other spellings through their
// callers.
func TestAppendGoJSON(t *testing.T) {
	jsontrees.Check(t, false, func(v any) ([]byte, error) {
		return Append(nil, v, GoJSON, func(dst []byte, v any) ([]byte, error) {
			b, err := json.Marshal(v)
			return append(dst, b...), err
		})
	})
}
