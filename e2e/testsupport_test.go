package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testSupport are the folders of the packages that exist only for tests:
// every test rig lives under internal/testing (a real authority on
// loopback, the browser process, a throwaway PostgreSQL, npm packages,
// what a test does when a part of the machine is missing, …).
var testSupport = []string{
	"github.com/pling-go/pling/internal/testing",
}

// TestTestSupport: no product package (what go build ./... builds for the
// commands, the libraries and the module) depends on the test-support
// packages; only tests (and e2e) import them.
func TestTestSupport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list: not in -short mode")
	}
	out := goList(t, nil, "-e", "-f", "{{.ImportPath}}: {{join .Deps \" \"}}", "./...")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		pkg, deps, _ := strings.Cut(line, ": ")
		if strings.HasPrefix(pkg, "github.com/pling-go/pling/e2e") || isTestSupport(pkg) {
			continue
		}
		for _, d := range strings.Fields(deps) {
			if isTestSupport(d) {
				t.Errorf("%s depends on the test-support package %s", pkg, d)
			}
		}
	}
}

func isTestSupport(pkg string) bool {
	for _, s := range testSupport {
		if pkg == s || strings.HasPrefix(pkg, s+"/") {
			return true
		}
	}
	return false
}

// goTool is the go command the tests run: the one on PATH, which go test
// puts first (GOROOT/bin), rather than runtime.GOROOT, which names the
// GOROOT of the build and is deprecated.
func goTool(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	return p
}

// goList runs go list args in the repository's root, with env added to
// the environment, and returns what it printed; its failure fails t.
func goList(t *testing.T, env []string, args ...string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool(t), append([]string{"list"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}
