package demosite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Pages carry a Content-Security-Policy that lets in only the site's own
// scripts and the module (wasm-unsafe-eval) and forbids framing; the
// module files may be fetched by any origin (CORS), which a page on
// another origin needs to load pling.wasm; nothing is sniffed. Pages
// also say X-Frame-Options: DENY.
func TestServeSecurityHeaders(t *testing.T) {
	// The policy, spelled out: a change to it is a change to this test.
	const csp = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	_, ts := newTestServer(t, fakeModule())
	type headers struct{ CSP, ACAO, CORP, Nosniff, XFO string }
	tests := []struct {
		path string
		want headers
	}{
		{"/", headers{CSP: csp, CORP: "same-origin", Nosniff: "nosniff", XFO: "DENY"}},
		{"/shop/", headers{CSP: csp, CORP: "same-origin", Nosniff: "nosniff", XFO: "DENY"}},
		{"/orders/", headers{CSP: csp, CORP: "same-origin", Nosniff: "nosniff", XFO: "DENY"}},
		{"/settings/", headers{CSP: csp, CORP: "same-origin", Nosniff: "nosniff", XFO: "DENY"}},
		{"/assets/site.js", headers{CORP: "same-origin", Nosniff: "nosniff"}},
		{"/pling/pling.js", headers{ACAO: "*", CORP: "cross-origin", Nosniff: "nosniff"}},
		{"/pling/pling.wasm", headers{ACAO: "*", CORP: "cross-origin", Nosniff: "nosniff"}},
		{"/pling/wasm_exec.js", headers{ACAO: "*", CORP: "cross-origin", Nosniff: "nosniff"}},
		{"/pling/ui.js", headers{ACAO: "*", CORP: "cross-origin", Nosniff: "nosniff"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res, _ := get(t, ts, "GET", tt.path, nil)
			h := res.Header
			got := headers{h.Get("Content-Security-Policy"), h.Get("Access-Control-Allow-Origin"),
				h.Get("Cross-Origin-Resource-Policy"), h.Get("X-Content-Type-Options"), h.Get("X-Frame-Options")}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s headers (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}
