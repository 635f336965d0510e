// Package npmtest installs a pinned npm package for a test: the real
// client or library from the registry, not a copy kept in the repository.
// An install is cached per machine (under the user's cache directory), so
// a package is fetched once however many tests and packages ask for it.
// Without npm or the registry the test skips on a developer's machine and
// fails in CI (internal/testing/require, part NPM).
package npmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/require"
)

// Install installs pkg at exactly version (without its install scripts,
// with env added to npm's environment) into the user's cache and returns
// the package's directory. A cached install of that version is reused.
func Install(t testing.TB, pkg, version string, env ...string) string {
	t.Helper()
	_, npm := require.NPM(t)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	pkgDir, err := Cached(ctx, filepath.Join(cache, "pling", "npmtest"), npm, pkg, version, env, nil)
	if errors.Is(err, ErrInstall) {
		require.Missing(t, require.PartNPM, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	return pkgDir
}

// ErrInstall is the error of an npm install that failed (no registry, no
// such version), as opposed to a broken cache.
var ErrInstall = errors.New("npm install failed")

// Cached installs pkg at exactly version into a folder of its own under
// cacheDir with the npm command npm, once, and returns the package's
// directory; later calls reuse the install. progress, when given, hears
// of an install before it starts. It is the one installer of the tests
// and the benchmarks (e2e/cmd/pling-bench), which have no testing.TB.
func Cached(ctx context.Context, cacheDir, npm, pkg, version string, env []string, progress func(format string, args ...any)) (string, error) {
	name := strings.NewReplacer("/", "+", "@", "").Replace(pkg) + "-" + version
	dir := filepath.Join(cacheDir, name)
	pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))
	if installed(pkgDir) == version {
		return pkgDir, nil
	}
	if progress != nil {
		progress("npm install %s@%s into %s", pkg, version, dir)
	}
	// Into a fresh folder beside the cache entry, renamed into place once
	// complete: tests of several packages may install at once.
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, name+".tmp")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// Few, short retries: without the registry, npm's defaults wait over
	// a minute before giving up.
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-save", "--no-package-lock", "--no-audit", "--no-fund",
		"--ignore-scripts", "--fetch-retries=1", "--fetch-retry-mintimeout=1000", "--fetch-retry-maxtimeout=3000", pkg+"@"+version)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s@%s: %v: %s", ErrInstall, pkg, version, err, LastLines(out.String(), 5))
	}
	if got := installed(filepath.Join(tmp, "node_modules", filepath.FromSlash(pkg))); got != version {
		return "", fmt.Errorf("npm installed %s %q, not %s", pkg, got, version)
	}
	if err := os.Rename(tmp, dir); err != nil && installed(pkgDir) != version {
		// Another process put it there first, or an old entry is in the way.
		os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			return "", err
		}
	}
	return pkgDir, nil
}

// installed returns the version of the package in dir, "" when none.
func installed(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return ""
	}
	var m struct{ Version string }
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.Version
}

// LastLines returns the last n lines of s, for an error that quotes a
// command's output.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WebMCPPolyfill is the script (IIFE) bundle of the WebMCP polyfill the
// tests run pages with, @mcp-b/webmcp-polyfill at the pinned version: it
// gives a page document.modelContext where the browser has none.
func WebMCPPolyfill(t testing.TB) []byte {
	t.Helper()
	const pkg, version = "@mcp-b/webmcp-polyfill", "5.1.0"
	root := Install(t, pkg, version)
	// The script bundle is the package's "./iife" export.
	var meta struct {
		Exports map[string]json.RawMessage
	}
	b, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &meta)
	}
	if err != nil {
		t.Fatalf("%s: package.json: %v", pkg, err)
	}
	var iife struct{ Default string }
	if err := json.Unmarshal(meta.Exports["./iife"], &iife); err != nil || iife.Default == "" {
		t.Fatalf("%s has no ./iife export: %s", pkg, b)
	}
	bundle, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(iife.Default)))
	if err != nil {
		t.Fatal(err)
	}
	return bundle
}

// DOMPurify is the browser bundle of DOMPurify at the pinned version
// (dompurify 3.5.0, dist/purify.min.js): it defines window.DOMPurify. The
// tests sanitize user content with its default settings, which keep
// data-*, role, aria-*, links, forms and buttons.
func DOMPurify(t testing.TB) []byte {
	t.Helper()
	root := Install(t, "dompurify", "3.5.0")
	b, err := os.ReadFile(filepath.Join(root, "dist", "purify.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
