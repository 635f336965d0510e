package demosite

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// Options.CSP replaces the policy of the pages (the browser benchmark's
// pages evaluate inline script).
func TestServeCSPOption(t *testing.T) {
	s, err := New(t.Context(), fakeModule(), Demo(), Options{Brotli: 1, CSP: "frame-ancestors 'self'"})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/shop/", nil))
	if got := rec.Header().Get("Content-Security-Policy"); got != "frame-ancestors 'self'" {
		t.Errorf("CSP %q", got)
	}
}

// DefaultCSP lets in no inline or eval'd script.
func TestDefaultCSP(t *testing.T) {
	for _, d := range []string{"script-src 'self' 'wasm-unsafe-eval';", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"} {
		if !strings.Contains(DefaultCSP, d) {
			t.Errorf("DefaultCSP lacks %q: %s", d, DefaultCSP)
		}
	}
}
