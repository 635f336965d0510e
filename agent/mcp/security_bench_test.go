package mcp_test

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/require"
)

// BenchmarkToolCall is the cost of the per-request origin check, side by
// side: a tool call (cart_add on the demo shop, in Chromium) through
// the bridge without a guard (the transport sends to whatever the tab
// shows, with nothing checked) and with one (the document read from the
// browser again before each request, and the request evaluated in that
// document's context). make bench-origin-check runs it; compare the two
// ns/op.
func BenchmarkToolCall(b *testing.B) {
	require.Chromium(b)
	base := demotest.Serve(b, demotest.Dist(b))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := cdp.Open(ctx, base+"/shop/", cdp.Options{Timeout: 20 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	run := func(b *testing.B, br *plingmcp.Bridge) {
		// A fresh page each run: its replay guard holds a bounded number
		// of request ids per session.
		if _, err := p.Navigate(ctx, base+"/shop/"); err != nil {
			b.Fatal(err)
		}
		if _, err := br.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
		st, ct := sdk.NewInMemoryTransports()
		if _, err := br.Server().Connect(ctx, st, nil); err != nil {
			b.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ResetTimer()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "cart_add", Arguments: map[string]any{"sku": "socks-wool", "qty": 1}})
			// Once the stock is gone the page answers a business failure:
			// still one whole request to the page and back.
			if err != nil || res == nil {
				b.Fatalf("cart_add: %v", err)
			}
		}
	}
	b.Run("unchecked", func(b *testing.B) {
		run(b, plingmcp.NewBridge(agent.New(p), plingmcp.WithBrowser(p, base)))
	})
	b.Run("origin-checked", func(b *testing.B) {
		g := plingmcp.NewGuard(p, nil)
		run(b, plingmcp.NewBridge(agent.New(g), plingmcp.WithBrowser(p, base), plingmcp.WithGuard(g)))
	})
}
