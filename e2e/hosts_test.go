package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pling-go/pling/runtime/conform"
)

// dist returns the directory with the built module, or skips when the
// module was not built (go test ./... without make). Under make test,
// PLING_DIST is set and a missing module is a failure.
func dist(t *testing.T) string {
	t.Helper()
	d := os.Getenv("PLING_DIST")
	if d == "" {
		abs, _ := filepath.Abs("../dist")
		if _, err := os.Stat(filepath.Join(abs, "pling.wasm")); err != nil {
			t.Skip("pling.wasm is not built; run make wasm (make test does)")
		}
		return abs
	}
	if _, err := os.Stat(filepath.Join(d, "pling.wasm")); err != nil {
		t.Fatalf("PLING_DIST=%s has no pling.wasm: %v", d, err)
	}
	return d
}

func hosts(t *testing.T) []conform.Host {
	d := dist(t)
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed; the Node host is part of the suite")
	}
	n := &conform.Node{Script: "../js-shim/conform-host.js", Dist: d}
	t.Cleanup(func() { n.Close() })
	return []conform.Host{conform.Native{}, n}
}

// TestConformanceEveryHost runs every case on every host: each must pass,
// and every host must answer every step with the same bytes as native.
func TestConformanceEveryHost(t *testing.T) {
	hs := hosts(t)
	cases, err := conform.LoadDir("conformance")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var ref *conform.Result
			for _, h := range hs {
				r := conform.Run(ctx, h, c)
				if !r.Pass {
					t.Errorf("%s on %s:\n%s", c.File, h.Name(), strings.Join(r.Failures, "\n"))
				}
				if ref == nil {
					ref = r
					continue
				}
				for i := range r.Responses {
					if !bytes.Equal(r.Responses[i], ref.Responses[i]) {
						t.Errorf("%s: step %d: %s differs from %s:\n%s: %s\n%s: %s", c.File, i+1, h.Name(), hs[0].Name(),
							hs[0].Name(), ref.Responses[i], h.Name(), r.Responses[i])
					}
				}
			}
		})
	}
}
