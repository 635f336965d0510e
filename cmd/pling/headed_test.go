package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/internal/testing/require"
)

// A person in the loop: with Headed the page is in a visible window, its
// approval dialog is shown there, the person approves in it, and the MCP
// call that waited reports the wait as progress.
func TestHeadedApprovalInTheVisiblePage(t *testing.T) {
	base := demoSite(t)
	require.Xvfb(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := cdp.Start(ctx, base+"/orders/", cdp.Options{Headed: true, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	b := plingmcp.NewBridge(agent.New(p), plingmcp.WithBrowser(p, base))
	st, ct := sdk.NewInMemoryTransports()
	ss, err := b.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var progress []string
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Message)
			mu.Unlock()
		},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()

	// The browser really has a window: not headless.
	if ua, err := chromedp.Run(p.Context(), chromedp.Evaluate[string](`navigator.userAgent`)); err != nil || strings.Contains(ua, "Headless") {
		t.Fatalf("user agent %q (%v): the browser is headless", ua, err)
	}
	person := make(chan error, 1)
	go func() { person <- personApproves(p.Context()) }()
	params := &sdk.CallToolParams{Name: "refund__order", Arguments: map[string]any{"record": "#1007", "reason": "damaged"}}
	params.SetProgressToken("refund-1")
	res, err := cs.CallTool(ctx, params)
	if perr := <-person; perr != nil {
		t.Fatalf("the person could not approve in the visible page: %v", perr)
	}
	if err != nil || res.IsError {
		t.Fatalf("refund__order: %v %+v", err, res)
	}
	var txt string
	for _, c := range res.Content {
		txt += c.(*sdk.TextContent).Text
	}
	t.Logf("result: %s", txt)
	if !strings.Contains(txt, "#1007 is ord_7") || !strings.Contains(txt, "approval ") {
		t.Errorf("result text lacks the approval evidence:\n%s", txt)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(progress) == 0 || !strings.HasPrefix(progress[0], "Waiting for a person to approve refund@order") {
		t.Errorf("progress %q", progress)
	}
}
