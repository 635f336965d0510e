package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/npmtest"
	"github.com/pling-go/pling/internal/testing/require"
)

// TestStrippedShimNode: the Node tests of the shim (js-shim/test/) pass
// on the copies make wasm ships, pling.js, ui.js and webmcp.js without
// their comments (internal/jsstrip), in place of the sources. The browser
// tests load those copies from dist/ already.
func TestStrippedShimNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Node tests: not in -short mode")
	}
	node := require.Node(t)
	d := dist(t)
	dir := t.TempDir()
	copyTree(t, filepath.Join("..", "js-shim"), dir)
	for _, f := range []string{"pling.js", "ui.js", "webmcp.js"} {
		b, err := os.ReadFile(filepath.Join(d, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "test/")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLING_DIST="+d)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node --test on the stripped shim: %v\n%s", err, npmtest.LastLines(string(out), 60))
	}
}

// copyTree copies the regular files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if e.IsDir() {
			if e.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
