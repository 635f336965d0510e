package chromium

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPath is the one lookup of the browser binary: an explicit path
// wins over $PLING_CHROMIUM, which wins over Default.
func TestPath(t *testing.T) {
	for _, tc := range []struct {
		name, path, env, want string
	}{
		{"default", "", "", Default},
		{"environment", "", "/opt/chrome", "/opt/chrome"},
		{"explicit path wins", "/usr/bin/chrome", "/opt/chrome", "/usr/bin/chrome"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PLING_CHROMIUM", tc.env)
			if got := Path(tc.path); got != tc.want {
				t.Errorf("Path(%q) with PLING_CHROMIUM=%q = %q, want %q", tc.path, tc.env, got, tc.want)
			}
		})
	}
}

// TestHeadless: a headless launch of Debian's chromium starts its
// headless shell when that is installed (an executable file); any other
// binary is launched as named.
func TestHeadless(t *testing.T) {
	dir := t.TempDir()
	shell := filepath.Join(dir, "chromium-headless-shell")
	if err := os.WriteFile(shell, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, bin, shell, want string
	}{
		{"debian chromium, shell installed", Default, shell, shell},
		{"debian chromium, no shell", Default, filepath.Join(dir, "absent"), Default},
		{"debian chromium, shell not executable", Default, notExec, Default},
		{"debian chromium, shell path a directory", Default, dir, Default},
		{"another browser is launched as named", "/opt/chrome/chrome", shell, "/opt/chrome/chrome"},
		{"chromium's own binary is launched as named", "/usr/lib/chromium/chromium", shell, "/usr/lib/chromium/chromium"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := headlessFor(tc.bin, tc.shell); got != tc.want {
				t.Errorf("headlessFor(%q, %q) = %q, want %q", tc.bin, tc.shell, got, tc.want)
			}
		})
	}
}
