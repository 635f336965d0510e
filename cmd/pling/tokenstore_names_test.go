package main

import (
	"path/filepath"
	"testing"
)

// TestTokenFileNamesDoNotCollide: distinct origins get distinct token
// files (issue 21 finding 7). On d4f77f3 it fails: localhost:8080 and
// localhost_8080 both were http_localhost_8080.token, and [::1]:8080 and
// [::1:8080] both http___1_8080.token.
func TestTokenFileNamesDoNotCollide(t *testing.T) {
	t.Setenv(tokenDirEnv, t.TempDir())
	tests := []struct {
		name string
		a, b string
	}{
		{"port-vs-underscore", "http://localhost:8080", "http://localhost_8080"},
		{"ipv6-brackets", "http://[::1]:8080", "http://[::1:8080]"},
		{"scheme", "http://a.example", "https://a.example"},
		{"scheme-in-host", "http://https_a.example", "https://a.example"},
		{"percent", "http://a%3a8080", "http://a:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pa, err := tokenFileFor(tt.a)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := tokenFileFor(tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if pa == pb {
				t.Errorf("%s and %s share the token file %s", tt.a, tt.b, filepath.Base(pa))
			}
		})
	}
	if got, want := tokenFileName("http://127.0.0.1:8080"), "http_127.0.0.1%3A8080.token"; got != want {
		t.Errorf("tokenFileName = %q, want %q", got, want)
	}
}
