package axtree

import (
	"testing"

	"github.com/chromedp/cdproto/accessibility"
)

// TestIndex: the root is the first node whose parent the list lacks,
// whether it names no parent or one outside the list.
func TestIndex(t *testing.T) {
	a := &accessibility.Node{NodeID: "a", ParentID: "r"}
	b := &accessibility.Node{NodeID: "b", ParentID: "a"}
	r := &accessibility.Node{NodeID: "r"}
	tests := []struct {
		name  string
		nodes []*accessibility.Node
		want  *accessibility.Node
	}{
		{"no parent", []*accessibility.Node{a, b, r}, r},
		{"a parent outside the list", []*accessibility.Node{b, a}, a},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			byID, root := Index(tt.nodes)
			if root != tt.want {
				t.Errorf("root = %v, want %v", root, tt.want)
			}
			if len(byID) != len(tt.nodes) {
				t.Errorf("byID has %d nodes, want %d", len(byID), len(tt.nodes))
			}
		})
	}
}
