package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTestLibraryInBinary fails when the pling binary links a test
// library or one of the repository's test rigs: they belong in _test.go
// files and internal/testing, never in what a user installs.
func TestNoTestLibraryInBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"github.com/google/go-cmp/",
		"github.com/pling-go/pling/internal/testing/",
		"testing",
		"testing/",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
				t.Errorf("pling links %s, a test library", dep)
			}
		}
	}
}
