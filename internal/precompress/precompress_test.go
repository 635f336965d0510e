package precompress

import "testing"

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		accept string
		br, gz bool
		want   string
		name   string
	}{
		{"gzip, br", true, true, "br", "tie prefers brotli"},
		{"gzip, br", false, true, "gzip", "no brotli bytes"},
		{"gzip, br", false, false, "identity", "nothing compressed"},
		{"identity;q=1, br;q=0.5", true, true, "identity", "identity asked for"},
		{"*;q=0", true, true, "identity", "nothing acceptable: identity anyway"},
		{"br;q=abc", true, true, "br", "a bad q is 1"},
		{",,;", true, true, "identity", "garbage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Negotiate(tc.accept, tc.br, tc.gz); got != tc.want {
				t.Errorf("Negotiate(%q) = %q, want %q", tc.accept, got, tc.want)
			}
		})
	}
}
