package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/schema"

	"github.com/pling-go/pling/internal/testing/npmtest"
	"github.com/pling-go/pling/internal/testing/require"
)

// npmTypeScript is the TypeScript the package's types are checked with,
// installed once into the user's cache directory.
var npmTypeScript = npmtest.Package{Name: "typescript", Version: "5.9.3"}

// packageJSON is what the tests read of js-shim/package.json.
type packageJSON struct {
	Name    string         `json:"name"`
	Version string         `json:"version"`
	Files   []string       `json:"files"`
	Exports map[string]any `json:"exports"`
}

func readPackageJSON(t *testing.T) packageJSON {
	t.Helper()
	b, err := os.ReadFile("../js-shim/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var p packageJSON
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("js-shim/package.json: %v", err)
	}
	return p
}

// TestNPMPackageVersion: the package's version is the protocol's
// (pling.surface/0.1 is 0.1.x), and every file it lists exists in
// js-shim/ or is built into dist/ by make wasm.
func TestNPMPackageVersion(t *testing.T) {
	p := readPackageJSON(t)
	want := strings.TrimPrefix(schema.Protocol, "pling.surface/") + "."
	if !strings.HasPrefix(p.Version, want) {
		t.Errorf("package.json version %q does not follow the protocol %s (want %sN)", p.Version, schema.Protocol, want)
	}
	for _, f := range p.Files {
		if strings.HasPrefix(f, "dist/") {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", "js-shim", f)); err != nil {
			t.Errorf("package.json lists %s: %v", f, err)
		}
	}
}

// stagePackage lays out the package as npm pack sees it: js-shim's listed
// files, and dist/ (pling.wasm, wasm_exec.js) from the built module.
func stagePackage(t *testing.T, distDir string) string {
	t.Helper()
	p := readPackageJSON(t)
	dir := t.TempDir()
	files := append([]string{"package.json"}, p.Files...)
	for _, f := range files {
		src := filepath.Join("..", "js-shim", f)
		if rest, ok := strings.CutPrefix(f, "dist/"); ok {
			src = filepath.Join(distDir, rest)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("staging %s: %v", f, err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestNPMPackage: npm pack the package, install the tarball offline into a
// scratch project, import it as ESM in Node and run an action, find its
// assets through its exports, and type-check a usage file of the whole
// page API with tsc --noEmit --strict, and a wrong one that must fail on
// every line marked "wrong:". It skips without node and npm unless
// PLING_REQUIRE_NPM=1 (CI).
func TestNPMPackage(t *testing.T) {
	n := npmTools(t)
	node, sh := n.node, n.sh
	tsc := typescript(t)
	proj := n.installPackage(t, dist(t))
	for _, f := range []string{"usage.ts", "wrong.ts", "run.mjs", "tsconfig.json", "tsconfig.wrong.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "npm", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Dir(filepath.Dir(tsc)), filepath.Join(proj, "node_modules", "typescript")); err != nil {
		t.Fatal(err)
	}

	t.Run("ESM in Node runs an action", func(t *testing.T) {
		out, err := sh(proj, node, "run.mjs")
		if err != nil {
			t.Fatalf("node run.mjs: %v\n%s", err, out)
		}
		var got struct {
			OK     bool
			Value  any
			Assets map[string]bool
			CJS    string
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("run.mjs printed %q: %v", out, err)
		}
		want := struct {
			OK     bool
			Value  any
			Assets map[string]bool
			CJS    string
		}{true, "hi npm", map[string]bool{"pling.wasm": true, "wasm_exec.js": true, "pling.js": true, "stub.js": true, "ui.js": true, "webmcp.js": true}, "function"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("run.mjs (-want +got):\n%s", diff)
		}
	})
	t.Run("the page API type-checks under --strict", func(t *testing.T) {
		if out, err := sh(proj, node, tsc, "--noEmit", "--strict", "-p", "tsconfig.json"); err != nil {
			t.Errorf("tsc --noEmit --strict usage.ts: %v\n%s", err, out)
		}
	})
	t.Run("the types refuse wrong uses", func(t *testing.T) {
		out, err := sh(proj, node, tsc, "--noEmit", "--strict", "-p", "tsconfig.wrong.json")
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("tsc on wrong.ts: %v (want a failure)\n%s", err, out)
		}
		src, _ := os.ReadFile(filepath.Join(proj, "wrong.ts"))
		lines := strings.Split(string(src), "\n")
		reported := map[int]bool{}
		for _, m := range regexp.MustCompile(`(?m)^wrong\.ts\((\d+),`).FindAllStringSubmatch(out, -1) {
			var n int
			fmt.Sscan(m[1], &n)
			reported[n] = true
		}
		marked := 0
		for i, l := range lines {
			_, why, ok := strings.Cut(l, "// wrong: ")
			switch {
			case ok:
				marked++
				if !reported[i+1] {
					t.Errorf("wrong.ts:%d type-checks, but must not (%s): %s", i+1, why, strings.TrimSpace(l))
				}
			case reported[i+1]:
				t.Errorf("wrong.ts:%d is not marked wrong, yet tsc refuses it:\n%s", i+1, out)
			}
		}
		if marked < 10 {
			t.Errorf("wrong.ts marks only %d lines", marked)
		}
	})
}

// npm is node and npm, found or skipped (fatal with PLING_REQUIRE_NPM=1),
// and a way to run them bounded by the test's context.
type npm struct {
	node, npm string
	ctx       context.Context
	sh        func(dir, name string, args ...string) (string, error)
}

// npmTools finds node and npm (findNPM); in -short mode it skips.
func npmTools(t *testing.T) *npm {
	t.Helper()
	n := findNPM(t)
	if testing.Short() && os.Getenv("PLING_REQUIRE_NPM") != "1" {
		t.Skip("packs and installs an npm package: not in -short mode")
	}
	return n
}

// findNPM finds node and npm (require.NPM: without them the test skips,
// or fails in CI). Its commands end with the test, or after five minutes.
func findNPM(t *testing.T) *npm {
	t.Helper()
	n := &npm{}
	n.node, n.npm = require.NPM(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	n.ctx = ctx
	n.sh = func(dir, name string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	return n
}

// installPackage npm packs the package staged from js-shim/ and distDir
// and installs the tarball offline into a new scratch ESM project, whose
// directory it returns.
func (n *npm) installPackage(t *testing.T, distDir string) string {
	t.Helper()
	stage := stagePackage(t, distDir)
	packs := t.TempDir()
	out, err := n.sh(stage, n.npm, "pack", "--silent", "--pack-destination", packs)
	if err != nil {
		t.Fatalf("npm pack: %v\n%s", err, out)
	}
	tarballs, _ := filepath.Glob(filepath.Join(packs, "*.tgz"))
	if len(tarballs) != 1 {
		t.Fatalf("npm pack made %v\n%s", tarballs, out)
	}
	t.Logf("packed %s", filepath.Base(tarballs[0]))

	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "package.json"), []byte(`{"name":"scratch","private":true,"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := n.sh(proj, n.npm, "install", "--offline", "--no-audit", "--no-fund", "--cache", t.TempDir(), tarballs[0]); err != nil {
		t.Fatalf("npm install --offline the tarball: %v\n%s", err, out)
	}
	return proj
}

// typescript returns the path of tsc, installing TypeScript npmTypeScript
// into the user's cache directory the first time.
func typescript(t *testing.T) string {
	t.Helper()
	return filepath.Join(npmtest.PackageDir(npmtest.Install(t, npmTypeScript), npmTypeScript.Name), "bin", "tsc")
}
