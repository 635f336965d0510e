package canon

import (
	"testing"

	"github.com/pling-go/pling/internal/testing/jsontrees"
)

// TestTrees: Marshal writes each value tree of the shared table in its
// pinned RFC 8785 form, byte for byte.
func TestTrees(t *testing.T) {
	jsontrees.Check(t, true, Marshal)
}
