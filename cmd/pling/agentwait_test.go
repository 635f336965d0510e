package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/chromium"
	"github.com/pling-go/pling/internal/testing/browsertest"
	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/syncbuf"

	"github.com/pling-go/pling/internal/testing/require"
)

// approvalFixture has one action that needs a person's approval; the
// scripted backend approves.
const approvalFixture = `{
  "config": {"approvalTtlMs": 120000},
  "records": {"order": [{"id": "ord_1", "label": "#1001", "visible": true}]},
  "actions": [
    {"id": "refund", "title": "Refund order", "record": {"kind": "order"}, "risk": "destructive",
     "approval": "approve", "run": {"return": {"refunded": true}}}
  ]
}`

// TestInvokeSaysAPersonIsAsked: while the page asks a person, pling invoke
// says so on stderr (stdout stays the result).
func TestInvokeSaysAPersonIsAsked(t *testing.T) {
	page := "fixture:" + writeFixture(t, "approval.json", approvalFixture)
	code, out, errOut := runCmd(t, "invoke", page, "refund@order", "--record", "ord_1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	want := "pling invoke: waiting for a person to approve refund@order (up to 2m0s)"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	if strings.Contains(out, "waiting") {
		t.Errorf("stdout has the waiting line:\n%s", out)
	}
}

// browserTest readies a test that starts Chromium: not under -short, the
// browser required (a failure in CI, a skip elsewhere: require.Chromium),
// and no browser session of the environment (PLING_CDP) borrowed.
func browserTest(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	require.Chromium(t)
	t.Setenv("PLING_CDP", "")
}

// TestMCPBrowserGone kills the browser under a running pling mcp: the
// command says the browser is gone and exits non-zero, instead of staying
// up, answering every call "unconfirmed" and logging a failure every poll.
func TestMCPBrowserGone(t *testing.T) {
	require.Chromium(t)
	t.Setenv("PLING_CDP", "")
	base := demotest.Serve(t, demotest.Dist(t))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	before := browsertest.Children()
	m := startMCP(t, base+"/shop/", "--poll", "500ms")
	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	defer ccancel()
	if _, err := m.cs.ListTools(cctx, nil); err != nil {
		t.Fatal(err)
	}
	browsertest.Kill(t, before)

	// A call now is refused plainly, or the command is already gone.
	callCtx, callCancel := context.WithTimeout(ctx, 20*time.Second)
	_, err := m.cs.CallTool(callCtx, &sdk.CallToolParams{Name: "cart_add", Arguments: map[string]any{"sku": "pack-20"}})
	callCancel()
	if err != nil && strings.Contains(err.Error(), "unconfirmed") {
		t.Errorf("the call after the browser died: %v; want the browser gone and nothing sent, not unconfirmed", err)
	}
	select {
	case <-m.exited:
		if m.code == 0 {
			t.Errorf("pling mcp exited 0 after its browser died")
		}
	case <-time.After(10 * time.Second):
		t.Errorf("pling mcp still runs 10s after its browser died; stderr:\n%s", m.stderr.String())
	}
	errOut := m.stderr.String()
	if !strings.Contains(errOut, "the browser is gone") {
		t.Errorf("stderr does not say the browser is gone:\n%s", errOut)
	}
	if n := strings.Count(errOut, "describe failed"); n > 1 {
		t.Errorf("stderr logs %d describe failures, want at most one:\n%s", n, errOut)
	}
}

// devTools takes the browser's websocket address from its output.
type devTools struct{ syncbuf.Buffer }

func (d *devTools) url() string {
	for _, line := range strings.Split(d.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "DevTools listening on "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// The default approval dialog lives in a closed shadow root of a
// <pling-ui data-pling-ui=approve> element and answers only trusted
// input. approvalRoot and personApproves are the only places this test
// touches its markup.
const approvalHost = `[data-pling-ui=approve]`

// approvalRoot waits for the approval dialog and returns its shadow root,
// which DevTools sees although page scripts cannot.
func approvalRoot(ctx context.Context) (*chromedp.Node, error) {
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(approvalHost), chromedp.Populate(-1, true)))
	if err != nil {
		return nil, err
	}
	nodes[0].RLock()
	roots := nodes[0].ShadowRoots
	nodes[0].RUnlock()
	if len(roots) == 0 {
		return nil, fmt.Errorf("%s has no shadow root", approvalHost)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`dialog[open]`), chromedp.FromNode(roots[0]))); err != nil {
		return nil, err
	}
	return roots[0], nil
}

// personApproves plays the person at the default approval dialog of the
// tab: a real, trusted click (CDP input) on Approve once it is enabled.
func personApproves(ctx context.Context) error {
	root, err := approvalRoot(ctx)
	if err != nil {
		return err
	}
	yes := chromedp.CSS(`[data-pling-ui-answer=yes]`)
	if err := chromedp.Do(ctx, chromedp.WaitEnabled(yes, chromedp.FromNode(root))); err != nil {
		return err
	}
	return chromedp.Do(ctx, chromedp.Click(yes, chromedp.FromNode(root)))
}

// TestInvokeWaitsForThePersonInTheBrowser is the acceptance of the
// approval wait: pling invoke URL refund@order on the demo orders page, a
// person who approves after the transport's default 30 s, and the command
// reports the refund — not "unconfirmed" after 30 s.
func TestInvokeWaitsForThePersonInTheBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("waits more than 30 s: not in -short mode")
	}
	bin := chromium.Path("")
	base := demotest.Serve(t, demotest.Dist(t))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	// A browser with a debugging port: pling invoke attaches to it
	// ($PLING_CDP), and the test plays the person in the tab it opens.
	out := &devTools{}
	actx, acancel, err := cdp.NewAllocator(ctx, bin, remote.WebSocket, chromedp.CombinedOutput(out))
	if err != nil {
		t.Fatal(err)
	}
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Setenv("PLING_CDP", out.url())

	var stdout, stderr syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"invoke", base + "/orders/", "refund@order", "--record", "ord_7", "--input", `{"reason":"damaged"}`}, &stdout, &stderr)
	}()
	var tab context.Context
	for deadline := time.Now().Add(time.Minute); tab == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pling invoke opened no orders tab; stderr:\n%s", stderr.String())
		}
		infos, _ := chromedp.Targets(bctx)
		for _, in := range infos {
			if in.Type == "page" && strings.Contains(in.URL, "/orders/") {
				tab, _ = chromedp.NewContext(bctx, chromedp.WithTargetID(in.TargetID))
			}
		}
	}
	wctx, wcancel := context.WithTimeout(tab, time.Minute)
	defer wcancel()
	if _, err := approvalRoot(wctx); err != nil {
		t.Fatalf("no approval dialog: %v; stderr:\n%s", err, stderr.String())
	}
	time.Sleep(32 * time.Second) // the person takes longer than the transport's default 30 s
	select {
	case code := <-done:
		t.Fatalf("pling invoke gave up before the person answered: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	default:
	}
	if err := personApproves(wctx); err != nil {
		t.Fatalf("the person could not approve: %v", err)
	}
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(stdout.String(), "ok: refund@order") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("pling invoke did not return after the person approved")
	}
	if want := "pling invoke: waiting for a person to approve refund@order (up to 5m0s)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}

// TestInvokeSaysNobodyCanSeeTheBrowser: when pling invoke waits for a
// person in a browser nobody can see (one it launched headless, or a
// session's tab started without --headed), it says so and how to give
// them a window; not for a fixture or a browser reached through
// $PLING_CDP.
func TestInvokeSaysNobodyCanSeeTheBrowser(t *testing.T) {
	t.Setenv("PLING_CDP", "")
	tests := []struct {
		name, session, target, cdp string
		want                       bool
	}{
		{"a headless launch", "", "http://127.0.0.1:8080/orders/", "", true},
		{"a fixture", "", "fixture:orders.json", "", false},
		{"a browser of $PLING_CDP", "", "https://shop.example/", "ws://127.0.0.1:9222/devtools/browser/x", false},
		{"an unknown session", "nosuch", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PLING_CDP", tc.cdp)
			if got := unseenBrowser(tc.session, tc.target); got != tc.want {
				t.Errorf("unseenBrowser(%q, %q) = %v, want %v", tc.session, tc.target, got, tc.want)
			}
		})
	}
	note := unseenNote("http://127.0.0.1:8080/orders/")
	for _, want := range []string{"nobody can see this browser", "pling session start --headed http://127.0.0.1:8080/orders/", "--session-name", "pling mcp --headed"} {
		if !strings.Contains(note, want) {
			t.Errorf("the note lacks %q: %s", want, note)
		}
	}
}

// TestInvokeNoUnseenNoteForAuthorityApproval: an approval the person
// gives on the authority's screen (Waiting.Outside) is answered there, so
// pling invoke does not say that nobody can see its browser; it names
// the screen instead. In the page it still says so.
func TestInvokeNoUnseenNoteForAuthorityApproval(t *testing.T) {
	const target = "http://127.0.0.1:8080/orders/"
	for _, tc := range []struct {
		name       string
		w          agent.Waiting
		unseen     bool
		wantUnseen bool
		wantLine   string
	}{
		{"in the page, headless", agent.Waiting{Capability: "refund@order", Kind: "approval"}, true, true, "waiting for a person to approve refund@order ("},
		{"on the authority's screen, headless", agent.Waiting{Capability: "refund@order", Kind: "approval", Outside: true}, true, false, "on the authority's approval screen"},
		{"in the page, a window", agent.Waiting{Capability: "refund@order", Kind: "approval"}, false, false, "waiting for a person to approve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := waitingNotes(tc.w, tc.unseen, target)
			text := strings.Join(lines, "\n")
			if got := strings.Contains(text, "nobody can see this browser"); got != tc.wantUnseen {
				t.Errorf("says nobody can see the browser: %v, want %v:\n%s", got, tc.wantUnseen, text)
			}
			if !strings.Contains(lines[0], tc.wantLine) {
				t.Errorf("first line %q lacks %q", lines[0], tc.wantLine)
			}
		})
	}
}
