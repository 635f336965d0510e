package e2e

import (
	"strings"
	"testing"
)

// TestRuntimeDeps: the runtime's tree, plinghttp (what a Go site imports
// to serve the module) and the shipped module carry none of
// the test and tooling dependencies (chromedp, go-cmp, wazero, the MCP
// SDK); those stay with the agent side, e2e/ and the hosts under wasm/.
func TestRuntimeDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list: not in -short mode")
	}
	for _, tc := range []struct {
		name string
		env  []string
		pkgs []string
	}{
		{"runtime", nil, []string{"./runtime/...", "./schema/...", "./errors/..."}},
		{"plinghttp", nil, []string{"./plinghttp"}},
		{"the module", []string{"GOOS=js", "GOARCH=wasm"}, []string{"./wasm"}},
		{"the test module", []string{"GOOS=js", "GOARCH=wasm"}, []string{"-tags=plingfixture", "./wasm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := goList(t, tc.env, append([]string{"-deps"}, tc.pkgs...)...)
			for _, p := range strings.Fields(out) {
				for _, bad := range []string{"github.com/chromedp/", "github.com/google/go-cmp/", "github.com/tetratelabs/wazero", "github.com/modelcontextprotocol/"} {
					if strings.HasPrefix(p, bad) {
						t.Errorf("%v depends on %s", tc.pkgs, p)
					}
				}
			}
		})
	}
}
