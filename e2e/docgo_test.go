package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// docCode returns the ```lang blocks of the README and docs/ that are not
// marked <!-- pling:norun: … -->, by FILE:LINE (docFenced).
func docCode(t *testing.T, langs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range docFenced(t, langs...) {
		if s.norun == "" {
			out[s.name] = s.html
		}
	}
	return out
}

// TestDocGoBlocks: every ```go block of the README and docs/ that is a
// whole file (it starts with a package clause) builds and vets as a
// package of this module; a fragment must be marked not run
// (cmd/pling's TestDocBlocksAccounted holds that).
func TestDocGoBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs: not in -short mode")
	}
	goTool := goTool(t)
	n := 0
	for name, src := range docCode(t, "go") {
		if !strings.HasPrefix(strings.TrimSpace(src), "package ") {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			// In the module (testdata is outside ./...), so the block
			// builds against this repository's packages.
			dir, err := os.MkdirTemp("testdata", "docgo-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			for _, args := range [][]string{{"build", "-o", os.DevNull, "."}, {"vet", "."}} {
				cmd := exec.CommandContext(ctx, goTool, args...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("go %s on the block: %v\n%s\n%s", strings.Join(args, " "), err, out, src)
				}
			}
		})
	}
	if n < 2 {
		t.Errorf("found %d whole-file ```go blocks, want the getting-started guide's two at least", n)
	}
}
