package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPCommand runs pling mcp on pipes and talks to it with the Go SDK's
// client, as an MCP host would over the process's stdio.
func TestMCPCommand(t *testing.T) {
	shop := writeFixture(t, "shop.json", shopFixture)
	m := startMCP(t, "--fixture", shop, "--poll", "0")
	cs := m.cs
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if got := cs.InitializeResult().ServerInfo.Name; got != "pling" {
		t.Errorf("server name %q", got)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	// checkout cannot run ("Cart is empty"): it is listed, saying so.
	if diff := cmp.Diff([]string{"approve__order", "cart_add", "cart_clear", "checkout"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if d := tools.Tools[3].Description; !strings.Contains(d, "Cart is empty") {
		t.Errorf("checkout's description %q does not say why it cannot run", d)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "cart_add", Arguments: map[string]any{"sku": "A1"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"value":{"added":true}`) {
		t.Errorf("structured content %s", b)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "cart_clear"})
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content[0].(*sdk.TextContent).Text, "EXECUTION_FAILED: ") {
		t.Errorf("failing call: %v %+v", err, res)
	}

	if code := m.stop(); code != 0 {
		t.Errorf("exit %d, stderr: %s", code, m.stderr.String())
	}
}

func TestMCPCommandUsage(t *testing.T) {
	t.Setenv("PLING_CHROMIUM", "/nonexistent/chromium") // URL targets fail fast: no browser

	shop := writeFixture(t, "shop.json", shopFixture)
	sess := writeFixture(t, "session.json", sessionFixture)
	runCmdCases(t, []cmdCase{
		{name: "help", args: []string{"mcp", "--help"}, wantErrOut: []string{"Usage: pling mcp"}},
		{name: "no page", args: []string{"mcp"}, wantExit: 2, wantErrOut: []string{"give one page"}},
		{name: "two pages", args: []string{"mcp", "--fixture", shop, "fixture:" + shop}, wantExit: 2, wantErrOut: []string{"give one page"}},
		{name: "negative poll", args: []string{"mcp", "--fixture", shop, "--poll", "-1s"}, wantExit: 2, wantErrOut: []string{"--poll"}},
		{name: "URL", args: []string{"mcp", "https://shop.example/"}, wantExit: 1, wantErrOut: []string{"no browser at"}},
		{name: "the session cannot describe", args: []string{"mcp", "--fixture", sess, "--session", "nope"}, wantExit: 1, wantErrOut: []string{"SESSION_INVALID"}},
	})
}
