package schema

import (
	"testing"

	"github.com/pling-go/pling/internal/testing/jsontrees"
)

// TestTrees: AppendValue (after what dst holds) and Encode write each value
// tree of the shared table in its pinned encoding/json form, byte for byte.
func TestTrees(t *testing.T) {
	t.Run("AppendValue", func(t *testing.T) {
		jsontrees.Check(t, false, func(v any) ([]byte, error) {
			b, err := AppendValue([]byte("x"), v)
			if err != nil {
				return nil, err
			}
			if len(b) == 0 || b[0] != 'x' {
				t.Fatalf("AppendValue lost what dst held: %q", b)
			}
			return b[1:], nil
		})
	})
	t.Run("Encode", func(t *testing.T) { jsontrees.Check(t, false, Encode) })
}
