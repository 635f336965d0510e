package cdp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBrowser is the one lookup of the browser binary: an explicit path
// wins over $PLING_CHROMIUM, which wins over DefaultChromium.
func TestBrowser(t *testing.T) {
	for _, tc := range []struct {
		name, path, env, want string
	}{
		{"default", "", "", DefaultChromium},
		{"environment", "", "/opt/chrome", "/opt/chrome"},
		{"explicit path wins", "/usr/bin/chrome", "/opt/chrome", "/usr/bin/chrome"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PLING_CHROMIUM", tc.env)
			if got := Browser(tc.path); got != tc.want {
				t.Errorf("Browser(%q) with PLING_CHROMIUM=%q = %q, want %q", tc.path, tc.env, got, tc.want)
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
		{"debian chromium, shell installed", DefaultChromium, shell, shell},
		{"debian chromium, no shell", DefaultChromium, filepath.Join(dir, "absent"), DefaultChromium},
		{"debian chromium, shell not executable", DefaultChromium, notExec, DefaultChromium},
		{"debian chromium, shell path a directory", DefaultChromium, dir, DefaultChromium},
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

// TestLaunchFlags: every launcher runs Chromium with the same flags, and
// turns the sandbox off only as root, where Chromium will not start with it.
func TestLaunchFlags(t *testing.T) {
	common := map[string]any{
		"headless": true, "hide-scrollbars": true, "mute-audio": true,
		"disable-gpu": true, "no-first-run": true,
		"disable-background-networking": true, "disable-component-update": true, "disable-sync": true,
		"window-size": "1280,900",
	}
	withSandboxOff := map[string]any{"no-sandbox": true}
	for k, v := range common {
		withSandboxOff[k] = v
	}
	for _, tc := range []struct {
		name string
		root bool
		want map[string]any
	}{
		{"not root: the sandbox stays on", false, common},
		{"root: no sandbox", true, withSandboxOff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, launchFlags(tc.root)); diff != "" {
				t.Errorf("launchFlags(root=%v) (-want +got):\n%s", tc.root, diff)
			}
		})
	}
}

// TestNewAllocatorNoBrowser: a missing binary (or a directory) is an
// ErrNoBrowser that names the path and how to get one, before anything starts.
func TestNewAllocatorNoBrowser(t *testing.T) {
	for _, bin := range []string{filepath.Join(t.TempDir(), "nope"), t.TempDir()} {
		_, cancel, err := NewAllocator(context.Background(), bin)
		if cancel != nil {
			t.Errorf("NewAllocator(%s): a cancel func with an error", bin)
		}
		if !errors.Is(err, ErrNoBrowser) {
			t.Fatalf("NewAllocator(%s) = %v, want ErrNoBrowser", bin, err)
		}
		if want := "no browser at " + bin + " (install it: apt-get install chromium; or set PLING_CHROMIUM)"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
	if _, err := os.Stat(DefaultChromium); err != nil {
		t.Logf("no %s here: only the missing-browser cases ran", DefaultChromium)
	}
}
