package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// returns the package's directory and its package.json.
func npmCached(ctx context.Context, cacheDir, pkg, version string, env []string, progress func(string, ...any)) (string, map[string]any, error) {
	dir := filepath.Join(cacheDir, "npm-"+strings.ReplaceAll(pkg, "/", "+")+"-"+version)
	pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))
	readPkg := func() (map[string]any, error) {
		b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, json.Unmarshal(b, &m)
	}
	meta, err := readPkg()
	if err == nil && meta["version"] == version {
		return pkgDir, meta, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", nil, fmt.Errorf("npm is needed to install %s: %w", pkg, err)
	}
	progress("npm install %s@%s into %s", pkg, version, dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-save", "--no-package-lock", "--no-audit", "--no-fund",
		"--ignore-scripts", pkg+"@"+version)
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("npm install %s@%s: %v\n%s", pkg, version, err, b)
	}
	if meta, err = readPkg(); err != nil {
		return "", nil, err
	}
	if meta["version"] != version {
		return "", nil, fmt.Errorf("npm installed %s %v, not %s", pkg, meta["version"], version)
	}
	return pkgDir, meta, nil
}
