package demotest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pling-go/pling/internal/testing/demotest"
)

// TestServe: the demo site answers its shop page, which loads the module.
func TestServe(t *testing.T) {
	base := demotest.Serve(t, demotest.Dist(t))
	res, err := http.Get(base + "/shop/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "pling") {
		t.Errorf("GET /shop/: %d\n%.300s", res.StatusCode, b)
	}
}

// TestDistRefusesADirectoryWithoutTheModule: PLING_DIST naming a
// directory without pling.wasm fails the test rather than skipping it.
func TestDistRefusesADirectoryWithoutTheModule(t *testing.T) {
	t.Setenv("PLING_DIST", t.TempDir())
	ft := &fakeT{TB: t}
	func() {
		defer func() { recover() }()
		demotest.Dist(ft)
	}()
	if !ft.failed {
		t.Error("Dist did not fail for a PLING_DIST without pling.wasm")
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
func (f *fakeT) Skip(...any) { panic("skip") }
