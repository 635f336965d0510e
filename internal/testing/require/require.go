// Package require is test support: the one place that decides what a test
// does when a part of the machine it needs is missing — Chromium, Node and
// npm, PostgreSQL's server binaries, Xvfb. On a developer's machine it
// skips the test, saying what to install; in CI it fails it, so a CI run
// that lost a part goes red instead of green with fewer tests.
//
// A part is required when CI=true (what CI services set) or when
// PLING_REQUIRE_<PART>=1 (PART is CHROMIUM, NODE, NPM, POSTGRES or XVFB),
// or PLING_REQUIRE_ALL=1. Product code must not import it (e2e's
// TestTestSupport checks that).
package require

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"
)

// The parts, as named in PLING_REQUIRE_<PART>.
const (
	PartChromium = "CHROMIUM"
	PartNode     = "NODE"
	PartNPM      = "NPM"
	PartPostgres = "POSTGRES"
	PartXvfb     = "XVFB"
)

// Required reports whether a missing part fails the test rather than
// skipping it: CI=true, PLING_REQUIRE_ALL=1 or PLING_REQUIRE_<part>=1.
func Required(part string) bool {
	return os.Getenv("CI") == "true" || os.Getenv("PLING_REQUIRE_ALL") == "1" || os.Getenv("PLING_REQUIRE_"+part) == "1"
}

// Missing ends t for a missing part: Fatal when the part is Required,
// else Skip. why says what is missing and how to install it.
func Missing(t testing.TB, part, why string) {
	t.Helper()
	if Required(part) {
		t.Fatalf("%s (required: CI=true or PLING_REQUIRE_%s=1)", why, part)
	}
	t.Skipf("%s (PLING_REQUIRE_%s=1 fails instead of skipping)", why, part)
}

// DefaultChromium is the browser when PLING_CHROMIUM is not set (Debian's
// chromium package), as agent/cdp's DefaultChromium.
const DefaultChromium = "/usr/bin/chromium"

// Chromium returns the browser the tests launch ($PLING_CHROMIUM, else
// DefaultChromium), or ends t when it is not there.
func Chromium(t testing.TB) string {
	t.Helper()
	p := os.Getenv("PLING_CHROMIUM")
	if p == "" {
		p = DefaultChromium
	}
	if _, err := os.Stat(p); err != nil {
		Missing(t, PartChromium, fmt.Sprintf("no browser at %s: apt-get install chromium, or set PLING_CHROMIUM", p))
	}
	return p
}

// Node returns the path of node, or ends t when it is not installed.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		Missing(t, PartNode, "node is not installed (apt-get install nodejs)")
	}
	return p
}

// NPM returns the paths of node and npm, or ends t when either is not
// installed.
func NPM(t testing.TB) (node, npm string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		npm, err = exec.LookPath("npm")
	}
	if err != nil {
		Missing(t, PartNPM, fmt.Sprintf("node and npm are needed: %v (apt-get install nodejs npm)", err))
	}
	return node, npm
}

// PostgresBinaries returns the directory holding PostgreSQL's initdb and
// postgres: the newest /usr/lib/postgresql/N/bin, else the directory of
// postgres on PATH; "" when there is none.
func PostgresBinaries() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(d string) int { n, _ := strconv.Atoi(filepath.Base(filepath.Dir(d))); return n }
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "postgres")) && isExec(filepath.Join(d, "initdb")) {
			return d
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil && isExec(filepath.Join(filepath.Dir(p), "initdb")) {
			return filepath.Dir(p)
		}
	}
	return ""
}

// Postgres returns the directory of PostgreSQL's server binaries (see
// PostgresBinaries), or ends t when they are not installed. Tests that
// want a running cluster use internal/testing/pgtest, which asks this
// package the same question.
func Postgres(t testing.TB) string {
	t.Helper()
	d := PostgresBinaries()
	if d == "" {
		Missing(t, PartPostgres, "PostgreSQL's server binaries are not installed (apt-get install postgresql)")
	}
	return d
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Xvfb starts a virtual display (Xvfb, from Debian's xvfb) for the test,
// ended when it ends, and points DISPLAY at it; it ends t when Xvfb is
// not installed.
func Xvfb(t testing.TB) {
	t.Helper()
	bin, err := exec.LookPath("Xvfb")
	if err != nil {
		Missing(t, PartXvfb, "Xvfb is not installed (apt-get install xvfb)")
		return
	}
	for n := 90 + os.Getpid()%100; n < 400; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
			continue
		}
		cmd := exec.Command(bin, fmt.Sprintf(":%d", n), "-screen", "0", "1280x900x24", "-nolisten", "tcp")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		for i := 0; i < 50; i++ {
			if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
				t.Setenv("DISPLAY", fmt.Sprintf(":%d", n))
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("Xvfb :%d did not start", n)
	}
	t.Fatal("no free X display number")
}
