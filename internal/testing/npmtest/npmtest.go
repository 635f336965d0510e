// Package npmtest installs pinned npm packages for a test: the real
// clients and libraries from the registry, not copies kept in the
// repository. An install is cached per machine (under the user's cache
// directory), so it is fetched once however many tests, packages and
// processes ask for it, and at the same time. Without npm or the registry
// the test skips on a developer's machine and fails in CI
// (internal/testing/require, part NPM).
package npmtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// Package is an npm package at an exact version.
type Package struct{ Name, Version string }

// String is the package's npm spec, name@version.
func (p Package) String() string { return p.Name + "@" + p.Version }

// Install installs pkgs, each at exactly its version and without install
// scripts, together into one folder in the user's cache, and returns that
// folder (the one holding node_modules; PackageDir finds a package in it).
// A finished install of the same packages is reused.
func Install(t testing.TB, pkgs ...Package) string {
	t.Helper()
	_, npm := require.NPM(t)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	folder, err := Cached(ctx, filepath.Join(cache, "pling", "npmtest"), npm, nil, nil, pkgs...)
	if errors.Is(err, ErrInstall) {
		require.Missing(t, require.PartNPM, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	return folder
}

// PackageDir is the directory of the package name installed in folder.
func PackageDir(folder, name string) string {
	return filepath.Join(folder, "node_modules", filepath.FromSlash(name))
}

// Project returns a new temporary folder for a test's scripts that
// import the packages installed in folder (its node_modules is folder's):
// the test writes them there, not into the install other tests and
// processes share.
func Project(t testing.TB, folder string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(folder, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ErrInstall is the error of an npm install that failed (no registry, no
// such version), as opposed to a broken cache.
var ErrInstall = errors.New("npm install failed")

// finished is the file an install's folder holds once every package is
// in it at its version: the list of the packages, one spec a line. It is
// written last, before the folder is renamed into place.
const finished = ".pling-npmtest-installed"

// Cached installs pkgs into a folder of their own under cacheDir with the
// npm command npm (env added to its environment), once, and returns the
// folder; later calls reuse it. progress, when given, hears of an install
// before it starts. It is the one installer of the tests and the
// benchmarks (e2e/cmd/pling-bench, which have no testing.TB).
//
// Installers in several goroutines and processes may run at once. Each
// installs into a fresh folder of its own beside the cache entry and
// renames it into place whole, once npm is done and every package is there
// at its version: the entry's path exists only as a finished install, so
// no caller sees one half-written, and one that failed or was killed
// leaves only its temporary folder, which is never taken for the entry.
// An entry is never removed, so none vanishes under another's feet.
func Cached(ctx context.Context, cacheDir, npm string, env []string, progress func(format string, args ...any), pkgs ...Package) (string, error) {
	if len(pkgs) == 0 {
		return "", errors.New("npmtest: no package to install")
	}
	specs := make([]string, len(pkgs))
	for i, p := range pkgs {
		if p.Name == "" || p.Version == "" {
			return "", fmt.Errorf("npmtest: %q is not a pinned package", p.String())
		}
		specs[i] = p.String()
	}
	list := strings.Join(specs, "\n") + "\n"
	name := entryName(pkgs, list)
	dir := filepath.Join(cacheDir, name)
	if done, err := isFinished(dir, list); done || err != nil {
		return dir, err
	}
	if progress != nil {
		progress("npm install %s into %s", strings.Join(specs, " "), dir)
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	removeStale(cacheDir, name)
	tmp, err := os.MkdirTemp(cacheDir, name+".tmp")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// Few, short retries: without the registry, npm's defaults wait over
	// a minute before giving up.
	args := append([]string{"install", "--prefix", tmp, "--no-save", "--no-package-lock", "--no-audit", "--no-fund",
		"--ignore-scripts", "--fetch-retries=1", "--fetch-retry-mintimeout=1000", "--fetch-retry-maxtimeout=3000"}, specs...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s: %v: %s", ErrInstall, strings.Join(specs, " "), err, LastLines(out.String(), 5))
	}
	for _, p := range pkgs {
		if got := installed(PackageDir(tmp, p.Name)); got != p.Version {
			return "", fmt.Errorf("npm installed %s %q, not %s", p.Name, got, p.Version)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, finished), []byte(list), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another installer put its finished folder there first.
		if done, ferr := isFinished(dir, list); done || ferr != nil {
			return dir, ferr
		}
		return "", err
	}
	return dir, nil
}

// staleAfter is the age of an entry's temporary folder past which no
// installer works in it any more: its process was killed.
const staleAfter = 24 * time.Hour

// removeStale removes the temporary folders beside the entry name that
// killed installers left behind.
func removeStale(cacheDir, name string) {
	tmps, _ := filepath.Glob(filepath.Join(cacheDir, name+".tmp*"))
	for _, tmp := range tmps {
		if fi, err := os.Stat(tmp); err == nil && time.Since(fi.ModTime()) > staleAfter {
			os.RemoveAll(tmp)
		}
	}
}

// entryName names the cache entry of pkgs (list, their specs): readable,
// and unique to the list by its hash.
func entryName(pkgs []Package, list string) string {
	name := strings.NewReplacer("/", "+", "@", "").Replace(pkgs[0].Name) + "-" + pkgs[0].Version
	if len(pkgs) > 1 {
		name += fmt.Sprintf("+%d", len(pkgs)-1)
	}
	sum := sha256.Sum256([]byte(list))
	return name + "-" + hex.EncodeToString(sum[:6])
}

// isFinished tells whether dir is a finished install of list: false when
// there is none yet, an error when something else is in its place (not
// removed: it is not the installer's to remove).
func isFinished(dir, list string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, finished))
	switch {
	case err == nil && string(b) == list:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		if _, serr := os.Stat(dir); errors.Is(serr, os.ErrNotExist) {
			return false, nil
		}
	}
	return false, fmt.Errorf("%s is not a finished install of %s: remove it", dir, strings.ReplaceAll(strings.TrimSpace(list), "\n", " "))
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
	const pkg = "@mcp-b/webmcp-polyfill"
	root := PackageDir(Install(t, Package{pkg, "5.1.0"}), pkg)
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
	root := PackageDir(Install(t, Package{"dompurify", "3.5.0"}), "dompurify")
	b, err := os.ReadFile(filepath.Join(root, "dist", "purify.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
