package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/require"
	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// demoSite serves the demo site with the built module; it skips without
// the module or a browser, and in -short mode.
func demoSite(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	require.Chromium(t)
	return demotest.Serve(t, demotest.Dist(t))
}

func runPling(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code = run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// One browser tab across CLI calls: pling session start opens the shop,
// pling invoke --session-name adds to the cart, and the next calls — a
// describe, an invoke on the checkout page the tab goes to, and with
// $PLING_CDP/$PLING_CDP_TAB from start's output — see the same cart.
// Without the session every invoke opens a fresh page and the checkout
// fails with "The cart is empty".
func TestBrowserSessionAcrossCalls(t *testing.T) {
	base := demoSite(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("PLING_CDP", "")
	t.Setenv("PLING_CDP_TAB", "")

	code, out, errs := runPling(t, "session", "start", "--name", "t1", base+"/shop/")
	if code != 0 {
		t.Fatalf("session start: exit %d\n%s%s", code, out, errs)
	}
	t.Cleanup(func() { runPling(t, "session", "stop", "--name", "t1") })
	env := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		kv, _, _ := strings.Cut(l, ";")
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if !strings.HasPrefix(env["PLING_CDP"], "ws://127.0.0.1:") || env["PLING_CDP_TAB"] == "" {
		t.Fatalf("session start printed %q", out)
	}

	if code, out, errs := runPling(t, "invoke", "--session-name", "t1", "cart.add", "--input", `{"sku":"socks-wool","qty":2}`); code != 0 {
		t.Fatalf("invoke cart.add: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runPling(t, "describe", "--session-name", "t1", "--json")
	if code != 0 || !strings.Contains(out, `"cart.count": 2`) {
		t.Fatalf("describe in the session: exit %d, want cart.count 2\n%s%s", code, out, errs)
	}
	// The tab goes to the checkout: the cart comes along (sessionStorage).
	code, out, errs = runPling(t, "invoke", "--session-name", "t1", base+"/checkout/", "order.place", "--json")
	if code != 0 || !strings.Contains(out, `"total": 28`) {
		t.Fatalf("invoke order.place on the checkout: exit %d\n%s%s", code, out, errs)
	}

	// $PLING_CDP and $PLING_CDP_TAB (what start printed) attach to the same
	// tab: a URL target sends it back to the shop, whose cart is now empty.
	t.Setenv("PLING_CDP", env["PLING_CDP"])
	t.Setenv("PLING_CDP_TAB", env["PLING_CDP_TAB"])
	if code, out, errs := runPling(t, "invoke", base+"/shop/", "cart.add", "--input", `{"sku":"tent-2p"}`); code != 0 {
		t.Fatalf("invoke with PLING_CDP_TAB: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runPling(t, "describe", base+"/shop/", "--json")
	if code != 0 || !strings.Contains(out, `"cart.count": 1`) || !strings.Contains(out, `"id": "checkout"`) {
		t.Fatalf("describe with PLING_CDP_TAB: exit %d, want cart.count 1 and checkout listed\n%s%s", code, out, errs)
	}

	// pling mcp --session-name attaches to the same tab: its tools are the
	// shop's, with the cart as it is.
	mcpTools := mcpToolNames(t, "--session-name", "t1", "--poll", "0")
	if !strings.Contains(mcpTools, "browser.open") || !strings.Contains(mcpTools, "checkout") {
		t.Errorf("pling mcp --session-name tools: %s", mcpTools)
	}

	if code, out, errs := runPling(t, "session", "stop", "--name", "t1"); code != 0 {
		t.Fatalf("session stop: exit %d\n%s%s", code, out, errs)
	}
	t.Setenv("PLING_CDP", "")
	t.Setenv("PLING_CDP_TAB", "")
	if code, _, errs := runPling(t, "invoke", "--session-name", "t1", "cart.add", "--input", `{"sku":"tent-2p"}`); code == 0 || !strings.Contains(errs, `no browser session "t1"`) {
		t.Errorf("invoke after stop: exit %d, stderr %s", code, errs)
	}
}

// When the session file cannot be written, pling session start fails
// (and stops the browser it started) rather than exiting 0 with a browser
// no later command can find. Here the cache directory's "pling" is a
// file, so the sessions directory cannot be made.
func TestSessionStartFailsWithoutItsFile(t *testing.T) {
	base := demoSite(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	if err := os.WriteFile(filepath.Join(cache, "pling"), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runPling(t, "session", "start", "--name", "nofile", base+"/shop/")
	if code != 1 || !strings.Contains(errs, "writing ") || out != "" {
		t.Errorf("session start without a writable session file: exit %d, stdout %q, stderr %s; want exit 1, nothing on stdout, a writing error", code, out, errs)
	}
}

// writeBrowserSession reports the directory it cannot make and the file
// it cannot write.
func TestWriteBrowserSession(t *testing.T) {
	dir := t.TempDir()
	s := &browserSessionFile{Name: "w", CDP: "ws://127.0.0.1:1/x", Tab: "T"}
	good := filepath.Join(dir, "sessions", "w.json")
	if err := writeBrowserSession(good, s); err != nil {
		t.Fatalf("writable path: %v", err)
	}
	if b, err := os.ReadFile(good); err != nil || !strings.Contains(string(b), `"tab": "T"`) {
		t.Errorf("written file: %q, %v", b, err)
	}
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeBrowserSession(filepath.Join(blocker, "sessions", "w.json"), s); err == nil {
		t.Error("a path under a regular file: no error")
	}
}

// --headed needs a display: without one, pling session start and pling
// mcp say so and fail, instead of falling back to a browser nobody sees.
func TestHeadedNeedsADisplay(t *testing.T) {
	base := demoSite(t)
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, _, errs := runPling(t, "session", "start", "--headed", "--name", "h", base+"/shop/")
	if code != 1 || !strings.Contains(errs, "--headed needs a display") {
		t.Errorf("session start --headed: exit %d, stderr %s", code, errs)
	}

	inR, inW := io.Pipe()
	old := mcpStdin
	mcpStdin = inR
	t.Cleanup(func() { mcpStdin = old; inW.Close() })
	var stderr syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runMCP(context.Background(), []string{base + "/shop/", "--headed", "--poll", "0"}, io.Discard, &stderr)
	}()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(stderr.String(), "--headed needs a display") {
			t.Errorf("pling mcp --headed: exit %d, stderr %s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("pling mcp --headed without a display did not exit")
	}
}

// pling mcp on a page URL is a browsing session: its tools are the
// browser.* tools and the page's, and the page's follow browser.open.
// With --verbose it prints the time start-up spent by phase.
func TestMCPBrowsing(t *testing.T) {
	base := demoSite(t)
	t.Setenv("PLING_CDP", "")
	changed := make(chan struct{}, 8)
	m := startMCPWith(t, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}, base+"/shop/", "--poll", "0", "--verbose")
	cs, stderr := m.cs, m.stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "folded") || !strings.Contains(ins, "browser.open") {
		t.Errorf("instructions %q", ins)
	}
	if got := m.tools(t); !strings.Contains(got, "browser.open") || !strings.Contains(got, "cart_add") {
		t.Fatalf("tools %s", got)
	}
	if !strings.Contains(stderr.String(), "pling mcp: start-up: launch ") || !strings.Contains(stderr.String(), "first tools/list answered") {
		t.Errorf("no start-up phases in stderr:\n%s", stderr.String())
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "browser.open", Arguments: map[string]any{"url": "/orders/"}})
	if err != nil || res.IsError {
		t.Fatalf("browser.open: %v %+v", err, res)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed after browser.open")
	}
	if got := m.tools(t); !strings.Contains(got, "approve__order") || strings.Contains(got, "cart_add") {
		t.Errorf("tools after browser.open /orders/: %s", got)
	}
	if code := m.stop(); code != 0 {
		t.Errorf("exit %d, stderr: %s", code, stderr.String())
	}
}

// mcpToolNames runs pling mcp with args, lists its tools with the Go SDK
// client and closes it.
func mcpToolNames(t *testing.T, args ...string) string {
	t.Helper()
	r := startMCP(t, args...)
	defer r.stop()
	return r.tools(t)
}
