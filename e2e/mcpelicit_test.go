package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/internal/testing/mcptest"
	"github.com/pling-go/pling/internal/testing/syncbuf"
	"github.com/pling-go/pling/schema"
)

// TestMCPApprovalScreenInHost: pling mcp, run as an MCP host runs it (the
// binary as a child process, the official Go SDK's client over its
// stdio, declaring URL elicitations), on the demo orders page with
// approvals "authority" and a real authority. A refund waits for the
// authority's approval: the host is asked, in URL mode, to open the
// authority's approval screen. Approved: the person (the test, in the
// browser's own tab, with the screen's cookie on the authority's origin)
// opens that URL and clicks Approve, and the call completes with the
// refund's result. Declined: the host's decline cancels the call, which
// ends saying so; the person approving on the screen afterwards runs
// nothing, as the page's count of refunded orders shows. The host is told
// when each screen it was asked to open is done with
// (notifications/elicitation/complete). Spoofed: a script of the page
// that names another approval of the session in a pling:waiting of its
// own gets nothing opened: the host is asked only for the call's own.
func TestMCPApprovalScreenInHost(t *testing.T) {
	if plingmcp.ApprovalPath != authority.ApprovalPath {
		t.Fatalf("mcp.ApprovalPath %q, the authority serves its screen at %q", plingmcp.ApprovalPath, authority.ApprovalPath)
	}
	site, ctx := startAuthoritySite(t)
	origin, authURL := site.origin, site.auth.URL
	grant := site.auth.DeviceGrant(t, authoritytest.Grant{Audience: origin, Scope: []string{"*"}, Agent: "agent-1"})
	token := grant.Token
	bctx, devTools := launchBrowser(t, ctx)
	bin := buildPlingBinary(t)

	// The orders the page can refund, from a tab of the test's own (the
	// demo's orders are the same on every load).
	p := openTab(t, ctx, devTools, origin+"/orders/?approvals=authority&tab=test", 20*time.Second)
	tb := &tab{t: t, pageConn: &pageConn{page: p, ctx: p.Context(), agent: agent.New(p, agent.WithSession(token), agent.WithIDPrefix("e2e-elicit"))}}
	orders := refundable(t, tb, 6)

	// The hosts of today speak 2025-11-25 (the SDK asks them inside the
	// call); a host on a later version gets the call's "input required"
	// and calls again with the answer.
	for i, version := range []string{"2025-11-25", ""} {
		name := version
		if name == "" {
			name = "latest"
		}
		t.Run(name, func(t *testing.T) {
			testApprovalScreenInHost(t, ctx, bctx, bin, devTools, origin, authURL, grant.SID, token, version, site.auth.OperatorKey, orders[3*i:3*i+3])
		})
	}
}

// testApprovalScreenInHost is TestMCPApprovalScreenInHost with a host on
// protocol version ("" the SDK's latest), refunding orders[0] (approved),
// orders[1] (declined) and orders[2] (spoofed, then declined).
func testApprovalScreenInHost(t *testing.T, ctx, bctx context.Context, bin, devTools, origin, authURL, sid, token, version, operatorKey string, orders []schema.RecordItem) {
	type asked struct {
		params *sdk.ElicitParams
	}
	elicited := make(chan asked, 4)
	completed := make(chan string, 8)
	var answer atomic.Value
	answer.Store("accept")
	stderr := &syncbuf.Buffer{}
	marker := "host=" + version
	cmd := exec.Command(bin, "mcp", origin+"/orders/?approvals=authority&"+marker, "--authority", authURL, "--poll", "0")
	cmd.Env = append(os.Environ(), "PLING_CDP="+devTools, "PLING_SESSION="+token)
	cmd.Stderr = stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "pling-elicit-test", Version: "0"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			elicited <- asked{req.Params}
			return &sdk.ElicitResult{Action: answer.Load().(string)}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	})
	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	cs, err := c.Connect(cctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	ccancel()
	if err != nil {
		t.Fatalf("starting pling mcp: %v (stderr: %s)", err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("pling mcp's stderr:\n%s", stderr.String())
		}
	})
	tool := ""
	for deadline := time.Now().Add(time.Minute); tool == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		lctx, lcancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := cs.ListTools(lctx, nil)
		lcancel()
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		for _, tl := range res.Tools {
			if strings.Contains(tl.Name, "refund") {
				tool = tl.Name
			}
		}
	}
	if tool == "" {
		t.Fatal("pling mcp never listed the refund tool")
	}
	// The page pling mcp drives: its tab of the browser, not the test's.
	// The page pling mcp drives: its tab of the browser, not the test's,
	// attached to and left open.
	var theirs context.Context
	top := t
	refunded := func(t *testing.T) string {
		t.Helper()
		if theirs == nil {
			targets, err := chromedp.Targets(bctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range targets {
				if tg.Type == "page" && strings.Contains(tg.URL, "/orders/") && strings.HasSuffix(tg.URL, marker) {
					octx, ocancel := context.WithTimeout(ctx, time.Minute)
					tp, err := cdp.Open(octx, "", cdp.Options{Remote: devTools, AttachTab: string(tg.TargetID)})
					ocancel()
					if err != nil {
						t.Fatalf("attaching to pling mcp's tab: %v", err)
					}
					top.Cleanup(func() { tp.Close() })
					theirs = tp.Context()
					break
				}
			}
			if theirs == nil {
				t.Fatal("no tab of pling mcp's in the browser")
			}
		}
		rctx, rcancel := context.WithTimeout(theirs, waitLimit)
		defer rcancel()
		n, err := chromedp.Run(rctx, chromedp.Evaluate[string](`(document.getElementById("counts") || {textContent: ""}).textContent.split(" · ").pop()`))
		if err != nil {
			t.Fatalf("reading pling mcp's page: %v", err)
		}
		return n
	}
	call := func(order string) <-chan *sdk.CallToolResult {
		out := make(chan *sdk.CallToolResult, 1)
		go func() {
			rctx, rcancel := context.WithTimeout(ctx, 2*time.Minute)
			defer rcancel()
			res, err := cs.CallTool(rctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"record": order, "reason": "damaged"}})
			if err != nil {
				res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "tools/call failed: " + err.Error()}}}
			}
			out <- res
		}()
		return out
	}
	lastElicitation := ""
	// completes waits for the host to be told that the screen of
	// elicitation id is done with.
	completes := func(t *testing.T, id string) {
		t.Helper()
		for deadline := time.After(30 * time.Second); ; {
			select {
			case got := <-completed:
				if got == id {
					return
				}
				t.Logf("a completion notice for %q", got)
			case <-deadline:
				t.Fatalf("pling mcp sent no notifications/elicitation/complete for %q in 30 s", id)
			}
		}
	}
	screenURL := func(t *testing.T) string {
		t.Helper()
		select {
		case a := <-elicited:
			if a.params.Mode != "url" || !strings.HasPrefix(a.params.URL, authURL+authority.ApprovalPath+"?id=") || a.params.ElicitationID == "" {
				t.Fatalf("elicitation %+v, want mode url, the authority's approval screen %s%s?id=… and an id", a.params, authURL, authority.ApprovalPath)
			}
			if !strings.Contains(a.params.Message, "refund") {
				t.Errorf("elicitation message %q does not name the action", a.params.Message)
			}
			lastElicitation = a.params.ElicitationID
			return a.params.URL
		case <-time.After(time.Minute):
			t.Fatal("pling mcp asked the host to open no approval screen in a minute")
			return ""
		}
	}
	person := func(t *testing.T, u string) {
		t.Helper()
		sctx, scancel := context.WithTimeout(bctx, waitLimit)
		defer scancel()
		if err := chromedp.Do(sctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("#approve")),
			chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("#done"))); err != nil {
			t.Fatalf("the person approves on %s: %v", u, err)
		}
	}
	text := mcptest.Text

	t.Run("approved", func(t *testing.T) {
		before := refunded(t)
		res := call(orders[0].ID)
		u := screenURL(t)
		person(t, u)
		completes(t, lastElicitation)
		select {
		case r := <-res:
			if r.IsError || !strings.HasPrefix(text(r), "Done") {
				t.Fatalf("the refund after the person approved: %s", text(r))
			}
			t.Logf("approved: %s", text(r))
		case <-time.After(time.Minute):
			t.Fatal("the refund did not complete in a minute after the person approved")
		}
		if after := refunded(t); after == before {
			t.Errorf("the page still says %q after the refund", after)
		}
	})

	t.Run("declined", func(t *testing.T) {
		answer.Store("decline")
		before := refunded(t)
		res := call(orders[1].ID)
		u := screenURL(t)
		select {
		case r := <-res:
			if !r.IsError || !strings.HasPrefix(text(r), "Cancelled: the person declined") {
				t.Fatalf("the refund the person declined answered: %s", text(r))
			}
			t.Logf("declined: %s", text(r))
		case <-time.After(time.Minute):
			t.Fatal("the declined refund did not end in a minute")
		}
		completes(t, lastElicitation)
		// Approving on the screen now runs nothing: the page cancelled the
		// call.
		person(t, u)
		id := u[strings.Index(u, "?id=")+len("?id="):]
		if code, out := authoritytest.Call(t, authURL, http.MethodGet, "/v1/approvals/"+id, operatorKey, nil); code != http.StatusOK || out["status"] != "approved" {
			t.Fatalf("the authority says HTTP %d %v after the person approved, want approved", code, out)
		}
		time.Sleep(3 * time.Second) // the page polls the authority every second
		if after := refunded(t); after != before {
			t.Errorf("the page says %q after the declined refund, %q before: it ran", after, before)
		}
	})

	t.Run("spoofed", func(t *testing.T) {
		// The attacker's approval: a real one of the same session (a page
		// script holds the token), for another order and request.
		decoyReq := map[string]any{"capability": "refund@order", "input": map[string]any{"record": orders[0].ID, "reason": "damaged"},
			"session": "sha256:" + strings.Repeat("d", 64), "requestId": "decoy-" + strings.ReplaceAll(t.Name(), "/", "-"),
			"expiresAtMs": time.Now().Add(5 * time.Minute).UnixMilli()}
		code, out := authoritytest.Call(t, authURL, http.MethodPost, "/v1/approvals", token, map[string]any{"sessionId": sid, "audience": origin,
			"request": decoyReq, "challenge": map[string]any{"binding": "sha256:" + strings.Repeat("0", 64), "capability": "refund@order",
				"title": "Refund order", "expiresAtMs": decoyReq["expiresAtMs"]}})
		if code != http.StatusCreated {
			t.Fatalf("the decoy approval: HTTP %d %v", code, out)
		}
		decoy, _ := out["id"].(string)
		refunded(t) // attached to pling mcp's tab
		// A script of the page names the decoy in a pling:waiting of its
		// own, for the call's request, as soon as the page says it asks.
		spoof := `(() => { let fired = false; addEventListener("pling:waiting", (e) => {
  const d = e.detail || {};
  if (fired || d.kind !== "approval" || d.approval) return;
  fired = true;
  dispatchEvent(new CustomEvent("pling:waiting", { detail: { id: d.id, capability: d.capability, kind: "approval", approval: ` + strconv.Quote(decoy) + `, timeoutMs: 60000 } }));
}); return true; })()`
		sctx, scancel := context.WithTimeout(theirs, waitLimit)
		if _, err := chromedp.Run(sctx, chromedp.Evaluate[bool](spoof)); err != nil {
			scancel()
			t.Fatalf("installing the spoofing script: %v", err)
		}
		scancel()
		answer.Store("decline")
		res := call(orders[2].ID)
		u := screenURL(t)
		if strings.HasSuffix(u, "?id="+decoy) {
			t.Fatalf("pling mcp asked the host to open the page script's approval %s for the refund of %s", u, orders[2].ID)
		}
		id := u[strings.Index(u, "?id=")+len("?id="):]
		code, got := authoritytest.Call(t, authURL, http.MethodGet, "/v1/approvals/"+id, operatorKey, nil)
		rq, _ := got["request"].(map[string]any)
		in, _ := rq["input"].(map[string]any)
		if code != http.StatusOK || fmt.Sprint(in["record"]) != orders[2].ID {
			t.Errorf("the screen the host was asked to open is of %v (HTTP %d), want the refund of %s", got["request"], code, orders[2].ID)
		}
		select {
		case r := <-res:
			if !r.IsError || !strings.HasPrefix(text(r), "Cancelled: the person declined") {
				t.Fatalf("the refund the person declined answered: %s", text(r))
			}
		case <-time.After(time.Minute):
			t.Fatal("the declined refund did not end in a minute")
		}
		if !strings.Contains(stderr.String(), "not this call's") {
			t.Errorf("pling mcp did not say it ignored the page's approval; its stderr:\n%s", stderr.String())
		}
	})
}

// buildPlingBinary builds the pling command into a scratch folder: the
// binary a user runs.
func buildPlingBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pling")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/pling-go/pling/cmd/pling").CombinedOutput(); err != nil {
		t.Fatalf("go build pling: %v\n%s", err, out)
	}
	return bin
}
