package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/chromium"
	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/require"
)

// TestRowsPageReadsOncePerDescribeThroughMCP: on the order page of make
// bench-rows (2,000 and 10,000 rows, five row actions of the kind, each
// with its availability checked row by row), every describe pling mcp
// makes runs the records reader once — counted in the page, through the
// pling binary attached to Chromium, the shim and the built module —
// and two approves through pling mcp and two in the page's own script
// succeed with their expectation met. It times nothing against a bound:
// the times are make bench-rows's figures.
func TestRowsPageReadsOncePerDescribeThroughMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a browser and the pling binary: not in -short mode")
	}
	browser := chromium.Headless(require.Chromium(t))
	dist := demotest.Dist(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "pling")
	if b, err := exec.CommandContext(ctx, "go", "build", "-o", bin, plingPackage).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	base, stop, err := serveRowsPage(dist)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, n := range []int{2000, 10000} {
		t.Run(fmt.Sprintf("rows=%d", n), func(t *testing.T) {
			res, err := benchRowsSize(ctx, base, bin, browser, n, 2, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			// The first tools/list and the three after the calls, at least.
			if res.DescribesCounted < 4 {
				t.Fatalf("%d describes counted (%d overlapped another request), want at least 4", res.DescribesCounted, res.DescribesOverlaps)
			}
			want := make([]int, res.DescribesCounted)
			for i := range want {
				want[i] = 1
			}
			if diff := cmp.Diff(want, res.ReadsPerDescribe); diff != "" {
				t.Errorf("records reader runs in each describe through pling mcp (-want +got):\n%s", diff)
			}
			if res.MCP.Ms.N != 2 || res.InPage.Ms.N != 2 {
				t.Errorf("%d calls through pling mcp and %d in the page, want 2 each", res.MCP.Ms.N, res.InPage.Ms.N)
			}
		})
	}
}
