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
	h := &elicitHost{top: t, ctx: ctx, bctx: bctx, devTools: devTools, origin: origin, authURL: authURL, sid: sid, token: token,
		operatorKey: operatorKey, marker: "host=" + version}
	h.start(t, bin, version)
	t.Run("approved", func(t *testing.T) { h.approved(t, orders[0].ID) })
	t.Run("declined", func(t *testing.T) { h.declined(t, orders[1].ID) })
	t.Run("spoofed", func(t *testing.T) { h.spoofed(t, orders[0].ID, orders[2].ID) })
}

// elicitHost is an MCP host that takes URL elicitations (the Go SDK's
// client), running pling mcp on the demo orders page in the test's
// browser, with the authority at authURL.
type elicitHost struct {
	top                                                *testing.T
	ctx, bctx                                          context.Context
	devTools, origin, authURL, sid, token, operatorKey string
	marker                                             string // the query that tells pling mcp's tab from others

	cs        *sdk.ClientSession
	tool      string // the refund tool's name
	stderr    *syncbuf.Buffer
	elicited  chan *sdk.ElicitParams
	completed chan string
	answer    atomic.Value // what the host answers an elicitation: accept or decline

	theirs          context.Context // pling mcp's tab, once attached
	lastElicitation string
}

// start runs pling mcp as the host's server on protocol version and waits
// for it to list the refund tool.
func (h *elicitHost) start(t *testing.T, bin, version string) {
	h.elicited = make(chan *sdk.ElicitParams, 4)
	h.completed = make(chan string, 8)
	h.answer.Store("accept")
	cmd := exec.Command(bin, "mcp", h.origin+"/orders/?approvals=authority&"+h.marker, "--authority", h.authURL, "--poll", "0")
	cmd.Env = append(os.Environ(), "PLING_CDP="+h.devTools, "PLING_SESSION="+h.token)
	c := sdk.NewClient(&sdk.Implementation{Name: "pling-elicit-test", Version: "0"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			h.elicited <- req.Params
			return &sdk.ElicitResult{Action: h.answer.Load().(string)}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
			h.completed <- req.Params.ElicitationID
		},
	})
	h.cs, h.stderr = mcptest.Child(t, h.ctx, "pling mcp", c, cmd, &sdk.ClientSessionOptions{ProtocolVersion: version})
	for deadline := time.Now().Add(time.Minute); h.tool == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		lctx, lcancel := context.WithTimeout(h.ctx, 30*time.Second)
		res, err := h.cs.ListTools(lctx, nil)
		lcancel()
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		for _, tl := range res.Tools {
			if strings.Contains(tl.Name, "refund") {
				h.tool = tl.Name
			}
		}
	}
	if h.tool == "" {
		t.Fatal("pling mcp never listed the refund tool")
	}
}

// refunded is the page's count of refunds, read in the page pling mcp
// drives: its tab of the browser, not the test's, attached to at the
// first read and left open.
func (h *elicitHost) refunded(t *testing.T) string {
	t.Helper()
	if h.theirs == nil {
		targets, err := chromedp.Targets(h.bctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range targets {
			if tg.Type == "page" && strings.Contains(tg.URL, "/orders/") && strings.HasSuffix(tg.URL, h.marker) {
				octx, ocancel := context.WithTimeout(h.ctx, time.Minute)
				tp, err := cdp.Open(octx, "", cdp.Options{Remote: h.devTools, AttachTab: string(tg.TargetID)})
				ocancel()
				if err != nil {
					t.Fatalf("attaching to pling mcp's tab: %v", err)
				}
				h.top.Cleanup(func() { tp.Close() })
				h.theirs = tp.Context()
				break
			}
		}
		if h.theirs == nil {
			t.Fatal("no tab of pling mcp's in the browser")
		}
	}
	rctx, rcancel := context.WithTimeout(h.theirs, waitLimit)
	defer rcancel()
	n, err := chromedp.Run(rctx, chromedp.Evaluate[string](`(document.getElementById("counts") || {textContent: ""}).textContent.split(" · ").pop()`))
	if err != nil {
		t.Fatalf("reading pling mcp's page: %v", err)
	}
	return n
}

// call calls the refund tool on order; its result comes on the channel
// (a failed tools/call as an error result saying so).
func (h *elicitHost) call(order string) <-chan *sdk.CallToolResult {
	out := make(chan *sdk.CallToolResult, 1)
	go func() {
		rctx, rcancel := context.WithTimeout(h.ctx, 2*time.Minute)
		defer rcancel()
		res, err := h.cs.CallTool(rctx, &sdk.CallToolParams{Name: h.tool, Arguments: map[string]any{"record": order, "reason": "damaged"}})
		if err != nil {
			res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "tools/call failed: " + err.Error()}}}
		}
		out <- res
	}()
	return out
}

// completes waits for the host to be told that the screen of
// elicitation id is done with.
func (h *elicitHost) completes(t *testing.T, id string) {
	t.Helper()
	for deadline := time.After(30 * time.Second); ; {
		select {
		case got := <-h.completed:
			if got == id {
				return
			}
			t.Logf("a completion notice for %q", got)
		case <-deadline:
			t.Fatalf("pling mcp sent no notifications/elicitation/complete for %q in 30 s", id)
		}
	}
}

// screenURL waits for pling mcp to ask the host to open the authority's
// approval screen, and returns its URL.
func (h *elicitHost) screenURL(t *testing.T) string {
	t.Helper()
	select {
	case p := <-h.elicited:
		if p.Mode != "url" || !strings.HasPrefix(p.URL, h.authURL+authority.ApprovalPath+"?id=") || p.ElicitationID == "" {
			t.Fatalf("elicitation %+v, want mode url, the authority's approval screen %s%s?id=… and an id", p, h.authURL, authority.ApprovalPath)
		}
		if !strings.Contains(p.Message, "refund") {
			t.Errorf("elicitation message %q does not name the action", p.Message)
		}
		h.lastElicitation = p.ElicitationID
		return p.URL
	case <-time.After(time.Minute):
		t.Fatal("pling mcp asked the host to open no approval screen in a minute")
		return ""
	}
}

// approved: the person approves on the screen the host opened; the
// refund runs and the host is told the screen is done with.
func (h *elicitHost) approved(t *testing.T, order string) {
	before := h.refunded(t)
	res := h.call(order)
	u := h.screenURL(t)
	personTab{h.bctx}.answer(t, u, "approve")
	h.completes(t, h.lastElicitation)
	select {
	case r := <-res:
		if r.IsError || !strings.HasPrefix(mcptest.Text(r), "Done") {
			t.Fatalf("the refund after the person approved: %s", mcptest.Text(r))
		}
		t.Logf("approved: %s", mcptest.Text(r))
	case <-time.After(time.Minute):
		t.Fatal("the refund did not complete in a minute after the person approved")
	}
	if after := h.refunded(t); after == before {
		t.Errorf("the page still says %q after the refund", after)
	}
}

// declined: the host declines; the call ends cancelled, and a person who
// approves on the screen afterwards runs nothing.
func (h *elicitHost) declined(t *testing.T, order string) {
	h.answer.Store("decline")
	before := h.refunded(t)
	res := h.call(order)
	u := h.screenURL(t)
	select {
	case r := <-res:
		if !r.IsError || !strings.HasPrefix(mcptest.Text(r), "Cancelled: the person declined") {
			t.Fatalf("the refund the person declined answered: %s", mcptest.Text(r))
		}
		t.Logf("declined: %s", mcptest.Text(r))
	case <-time.After(time.Minute):
		t.Fatal("the declined refund did not end in a minute")
	}
	h.completes(t, h.lastElicitation)
	// Approving on the screen now runs nothing: the page cancelled the
	// call.
	personTab{h.bctx}.answer(t, u, "approve")
	id := u[strings.Index(u, "?id=")+len("?id="):]
	if code, out := authoritytest.Call(t, h.authURL, http.MethodGet, "/v1/approvals/"+id, h.operatorKey, nil); code != http.StatusOK || out["status"] != "approved" {
		t.Fatalf("the authority says HTTP %d %v after the person approved, want approved", code, out)
	}
	time.Sleep(3 * time.Second) // the page polls the authority every second
	if after := h.refunded(t); after != before {
		t.Errorf("the page says %q after the declined refund, %q before: it ran", after, before)
	}
}

// spoofed: a script of the page names another approval (a real one of
// the same session, for decoyOrder) as the call's; pling mcp asks the
// host to open the screen of the call's own approval, for order.
func (h *elicitHost) spoofed(t *testing.T, decoyOrder, order string) {
	// The attacker's approval: a real one of the same session (a page
	// script holds the token), for another order and request.
	decoyReq := map[string]any{"capability": "refund@order", "input": map[string]any{"record": decoyOrder, "reason": "damaged"},
		"session": "sha256:" + strings.Repeat("d", 64), "requestId": "decoy-" + strings.ReplaceAll(t.Name(), "/", "-"),
		"expiresAtMs": time.Now().Add(5 * time.Minute).UnixMilli()}
	code, out := authoritytest.Call(t, h.authURL, http.MethodPost, "/v1/approvals", h.token, map[string]any{"sessionId": h.sid, "audience": h.origin,
		"request": decoyReq, "challenge": map[string]any{"binding": "sha256:" + strings.Repeat("0", 64), "capability": "refund@order",
			"title": "Refund order", "expiresAtMs": decoyReq["expiresAtMs"]}})
	if code != http.StatusCreated {
		t.Fatalf("the decoy approval: HTTP %d %v", code, out)
	}
	decoy, _ := out["id"].(string)
	h.refunded(t) // attached to pling mcp's tab
	// A script of the page names the decoy in a pling:waiting of its
	// own, for the call's request, as soon as the page says it asks.
	spoof := `(() => { let fired = false; addEventListener("pling:waiting", (e) => {
  const d = e.detail || {};
  if (fired || d.kind !== "approval" || d.approval) return;
  fired = true;
  dispatchEvent(new CustomEvent("pling:waiting", { detail: { id: d.id, capability: d.capability, kind: "approval", approval: ` + strconv.Quote(decoy) + `, timeoutMs: 60000 } }));
}); return true; })()`
	sctx, scancel := context.WithTimeout(h.theirs, waitLimit)
	if _, err := chromedp.Run(sctx, chromedp.Evaluate[bool](spoof)); err != nil {
		scancel()
		t.Fatalf("installing the spoofing script: %v", err)
	}
	scancel()
	h.answer.Store("decline")
	res := h.call(order)
	u := h.screenURL(t)
	if strings.HasSuffix(u, "?id="+decoy) {
		t.Fatalf("pling mcp asked the host to open the page script's approval %s for the refund of %s", u, order)
	}
	id := u[strings.Index(u, "?id=")+len("?id="):]
	code, got := authoritytest.Call(t, h.authURL, http.MethodGet, "/v1/approvals/"+id, h.operatorKey, nil)
	rq, _ := got["request"].(map[string]any)
	in, _ := rq["input"].(map[string]any)
	if code != http.StatusOK || fmt.Sprint(in["record"]) != order {
		t.Errorf("the screen the host was asked to open is of %v (HTTP %d), want the refund of %s", got["request"], code, order)
	}
	select {
	case r := <-res:
		if !r.IsError || !strings.HasPrefix(mcptest.Text(r), "Cancelled: the person declined") {
			t.Fatalf("the refund the person declined answered: %s", mcptest.Text(r))
		}
	case <-time.After(time.Minute):
		t.Fatal("the declined refund did not end in a minute")
	}
	if !strings.Contains(h.stderr.String(), "not this call's") {
		t.Errorf("pling mcp did not say it ignored the page's approval; its stderr:\n%s", h.stderr.String())
	}
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
