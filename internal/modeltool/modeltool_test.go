package modeltool

import (
	"strings"
	"testing"
)

// TestName: '.' becomes '_', '@' "__", other characters outside the set
// '-', and a name is cut to 64.
func TestName(t *testing.T) {
	tests := []struct{ id, want string }{
		{"cart.add", "cart_add"},
		{"approve@order", "approve__order"},
		{"a-b_c", "a-b_c"},
		{"a:b~c", "a-b-c"},
		{strings.Repeat("x", 100), strings.Repeat("x", 64)},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := Name(tt.id); got != tt.want {
				t.Errorf("Name(%q) = %q, want %q", tt.id, got, tt.want)
			}
		})
	}
}
