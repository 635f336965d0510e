package cdp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/chromium"
)

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
	if _, err := os.Stat(chromium.Default); err != nil {
		t.Logf("no %s here: only the missing-browser cases ran", chromium.Default)
	}
}
