package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/pling-go/pling/internal/testing/npmtest"
)

// userCache is the benchmarks' cache directory sub under the user's cache
// directory (the temporary directory when there is none).
func userCache(sub string) string {
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "pling", sub)
}

// npmCached installs pkg@version into cacheDir (once; later runs reuse it)
// without its install scripts, with env added to npm's environment, and
// returns the package's directory and its package.json. The install is
// the tests' own (internal/testing/npmtest).
func npmCached(ctx context.Context, cacheDir, pkg, version string, env []string, progress func(string, ...any)) (string, map[string]any, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", nil, fmt.Errorf("npm is needed to install %s: %w", pkg, err)
	}
	folder, err := npmtest.Cached(ctx, cacheDir, npm, env, progress, npmtest.Package{Name: pkg, Version: version})
	if err != nil {
		return "", nil, err
	}
	pkgDir := npmtest.PackageDir(folder, pkg)
	b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "", nil, err
	}
	var meta map[string]any
	return pkgDir, meta, json.Unmarshal(b, &meta)
}
