package main

import (
	"io"
	"path/filepath"
	"testing"
)

// TestTokenFileNamesDoNotCollide: distinct origins get distinct token
// files. A name that only replaced unsafe characters would collide:
// localhost:8080 and localhost_8080 both http_localhost_8080.token, and
// [::1]:8080 and [::1:8080] both http___1_8080.token.
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

// TestOriginTokens: a command's token goes to its own origin only — a
// given token to its audience (a pl1 token's aud, else the URL's origin),
// a stored one to the origin it was stored for.
func TestOriginTokens(t *testing.T) {
	t.Setenv(tokenDirEnv, t.TempDir())
	a, b := "http://127.0.0.1:8080", "http://localhost:9090"
	tokA, tokB := fakeToken(a), fakeToken(b)
	pa, _ := tokenFileFor(a)
	pb, _ := tokenFileFor(b)
	if err := writeTokenFile(pa, "stored-a"); err != nil {
		t.Fatal(err)
	}
	if err := writeTokenFile(pb, "stored-b"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, explicit, target string
		wantA, wantB           string
	}{
		{"pl1-for-A", tokA, a + "/shop/", tokA, ""},
		{"pl1-for-B-given-with-A", tokB, a + "/shop/", "", tokB},
		{"opaque-given-with-A", "opaque", a + "/shop/", "opaque", ""},
		{"opaque-without-target", "opaque", "", "", ""},
		{"stored", "", a + "/shop/", "stored-a", "stored-b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOriginTokens("test", tt.explicit, tt.target, io.Discard)
			if got := [2]string{o.forOrigin(a), o.forOrigin(b)}; got != [2]string{tt.wantA, tt.wantB} {
				t.Errorf("A, B got %q, want %q", got, [2]string{tt.wantA, tt.wantB})
			}
		})
	}
}
