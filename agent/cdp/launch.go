package cdp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/chromedp/chromedp"
)

// ErrNoBrowser is NewAllocator's error when there is no browser binary at
// the path it was given.
var ErrNoBrowser = errors.New("no browser")

// launchFlags are the command-line flags every launch adds to chromedp's
// defaults: headless, no GPU, no first-run or background work, one window
// size. The sandbox stays on unless this process runs as root, where
// Chromium refuses to start with it.
func launchFlags(root bool) map[string]any {
	f := map[string]any{
		"headless": true, "hide-scrollbars": true, "mute-audio": true,
		"disable-gpu": true, "no-first-run": true,
		"disable-background-networking": true, "disable-component-update": true, "disable-sync": true,
		"window-size": "1280,900",
	}
	if root {
		f["no-sandbox"] = true
	}
	return f
}

// NewAllocator is the one Chromium launcher: it checks that bin (see
// Browser) is a file and returns a chromedp allocator context that starts
// it with launchFlags, then extra (a debugging port, a profile directory,
// more flags). The browser starts with the first chromedp.Run on a context
// made from it. Without chromedp.UserDataDir, chromedp gives the browser a
// fresh temporary profile and removes it when the browser stops.
func NewAllocator(parent context.Context, bin string, extra ...chromedp.ExecAllocatorOption) (context.Context, context.CancelFunc, error) {
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return nil, nil, fmt.Errorf("%w at %s (install it: apt-get install chromium; or set PLING_CHROMIUM)", ErrNoBrowser, bin)
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(bin))
	for k, v := range launchFlags(os.Geteuid() == 0) {
		opts = append(opts, chromedp.Flag(k, v))
	}
	opts = append(opts, extra...)
	ctx, cancel := chromedp.NewExecAllocator(parent, opts...)
	return ctx, cancel, nil
}
