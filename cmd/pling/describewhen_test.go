package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// countPage has a read that changes nothing and a write that shows the
// new count in the page.
const countPage = `<!doctype html><title>Count</title>
<script src="/pling/pling.js" data-expose="*"></script>
<p id="n">0</p>
<script>
  let n = 0;
  pling.state("count", () => n);
  pling.action({ id: "count.read", title: "Read the count", risk: "read", params: { why: { type: "string" } }, run: () => n });
  pling.action({ id: "count.add", title: "Add one", run: () => { n++; document.getElementById("n").textContent = String(n); return n; } });
</script>`

// countRig is pling mcp (the binary, a child process with the Go SDK's
// client on its stdio) on the count page in Chromium, with --verbose,
// whose log of exchanges counts the describes.
type countRig struct{ pp *plingProcess }

func startCountPage(t *testing.T, poll string) countRig {
	t.Helper()
	browserTest(t)
	page := servePage(t, "count.html", countPage)
	return countRig{startPlingProcess(t, buildPling(t), []string{"PLING_CDP="}, "mcp", page, "--poll", poll, "--verbose")}
}

// describes is how many describes pling mcp logged so far.
func (c countRig) describes() int { return strings.Count(c.pp.stderr.String(), "method=describe") }

// settled waits until quietFor passes without a describe, and returns
// how many there were; still describing after 30 s fails the test.
func (c countRig) settled(t *testing.T, what string, quietFor time.Duration) int {
	t.Helper()
	n, since := c.describes(), time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Since(since) < quietFor; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still describing after 30 s (%d describes)", what, c.describes())
		}
		if m := c.describes(); m != n {
			n, since = m, time.Now()
		}
	}
	return n
}

// TestMCPDescribesWhenChanged: through the pling binary (a child
// process, the Go SDK's client on its stdio, a page in Chromium) with
// --poll 100ms, pling mcp describes the page when it changed, not at
// every look: once the first describes are done, ten calls that change
// nothing and a second of looks cause no describe; a call that changes
// the page's DOM causes the next look to describe, and then it is quiet
// again. The describes are counted in --verbose's log of exchanges
// (were every look to describe, that would be about ten a second).
func TestMCPDescribesWhenChanged(t *testing.T) {
	c := startCountPage(t, "100ms")
	pp, describes := c.pp, c.describes
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := pp.cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	start := c.settled(t, "start", time.Second)
	if start < 1 || start > 3 {
		t.Errorf("%d describes to start, want 1 to 3", start)
	}

	for i := 0; i < 10; i++ {
		res, err := pp.cs.CallTool(ctx, &sdk.CallToolParams{Name: "count_read", Arguments: map[string]any{"why": fmt.Sprint("look ", i)}})
		if err != nil || res.IsError {
			t.Fatalf("count_read %d: %v %+v", i, err, res)
		}
	}
	time.Sleep(time.Second)
	if n := describes(); n != start {
		t.Errorf("%d describes after ten reads and a second of looks, want %d (none more)", n, start)
	}

	res, err := pp.cs.CallTool(ctx, &sdk.CallToolParams{Name: "count_add", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("count_add: %v %+v", err, res)
	}
	for deadline := time.Now().Add(10 * time.Second); describes() == start; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no describe after the page's DOM changed")
		}
	}
	after := c.settled(t, "after the change", time.Second)
	t.Logf("describes: %d to start, %d after ten reads, %d after one change", start, start, after)
	if after-start > 2 {
		t.Errorf("%d describes for one change, want 1 or 2", after-start)
	}
}

// TestMCPToolsListDescribesWhenChanged: through the pling binary (a
// child process, the Go SDK's client on its stdio, a page in Chromium)
// with no looks (--poll 0), a tools/list on a page whose change mark has
// not moved answers from the last describe: ten lists after the first
// cost no describe; a call that changes the page's DOM moves the mark,
// and the next list describes. The describes are counted in --verbose's
// log of exchanges.
func TestMCPToolsListDescribesWhenChanged(t *testing.T) {
	c := startCountPage(t, "0")
	pp, describes := c.pp, c.describes
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Half a second without a describe logged is settled here (the log
	// reaches the test through a pipe of its own, after the answer it
	// went with).
	settled := func(what string) int { return c.settled(t, what, 500*time.Millisecond) }
	pp.waitTool(t, "count_add")
	start := settled("start")
	for i := 0; i < 10; i++ {
		if _, err := pp.cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("tools/list %d: %v", i, err)
		}
	}
	if n := settled("after ten tools/list"); n != start {
		t.Errorf("%d describes for ten tools/list on an unchanged page, want none (%d before them)", n-start, start)
	}
	// The call, or the list after it, describes the changed page (which
	// one does depends on whether the call's answer said so).
	before := describes()
	res, err := pp.cs.CallTool(ctx, &sdk.CallToolParams{Name: "count_add", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("count_add: %v %+v", err, res)
	}
	if _, err := pp.cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n := settled("after the change") - before; n < 1 || n > 2 {
		t.Errorf("%d describes for a call that changed the page's DOM and the tools/list after it, want 1 or 2", n)
	}
	t.Logf("describes: %d to start, none for ten tools/list, %d for a call that changed the page and the list after it", start, describes()-before)
}
