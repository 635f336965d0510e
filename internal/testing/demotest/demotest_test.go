package demotest_test

import (
	"testing"

	"github.com/pling-go/pling/internal/testing/demotest"
)

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
