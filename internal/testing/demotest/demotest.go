// Package demotest is test support for tests that open the demo site
// (internal/demosite) or other pages with the built module in Chromium:
// where the module is, and the demo site served on loopback. Product code
// must not import it.
package demotest

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pling-go/pling/internal/demosite"
)

// Dist returns the directory of the built module: $PLING_DIST, else dist/
// at the repository's root (what make wasm builds). Without pling.wasm
// there it skips t, or fails it when PLING_DIST names the directory.
func Dist(t testing.TB) string {
	t.Helper()
	d := os.Getenv("PLING_DIST")
	if d == "" {
		_, file, _, _ := runtime.Caller(0)
		d = filepath.Join(filepath.Dir(file), "..", "..", "..", "dist")
	}
	if _, err := os.Stat(filepath.Join(d, "pling.wasm")); err != nil {
		if os.Getenv("PLING_DIST") != "" {
			t.Fatalf("PLING_DIST=%s has no pling.wasm", d)
		}
		t.Skip("pling.wasm is not built; run make wasm")
	}
	return d
}

// Serve serves the demo site with the module in dist on a loopback
// server until t ends, and returns the server's URL.
func Serve(t testing.TB, dist string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := demosite.New(ctx, os.DirFS(dist), demosite.Demo(), demosite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL
}
