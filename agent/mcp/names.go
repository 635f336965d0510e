package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names are bound for the session (docs/agent.md "Security"): the
// first name a capability gets stays its own, and no other capability
// ever gets it, even when the page adds a capability whose name would
// take it (modeltool.Names resolves collisions within one list only:
// cart_empty could move from capability cart_empty to cart.empty). A
// capability that finds its name bound to another gets the next free
// name_2, name_3, ….

// maxBoundNames bounds the names a session remembers; past it, a
// capability never seen before is not offered (and the log says so).
const maxBoundNames = 4096

// bindNames gives each tool its bound name, binding new ones.
func (b *Bridge) bindNames(ctx context.Context, tools []Tool) []Tool {
	out := make([]Tool, 0, len(tools))
	taken := make(map[string]bool, len(tools))
	var fresh []Tool
	for _, t := range tools {
		if n, ok := b.names[t.Capability]; ok {
			taken[n] = true
			out = append(out, renamed(t, n))
		} else {
			fresh = append(fresh, t)
		}
	}
	for _, t := range fresh {
		if len(b.bound) >= maxBoundNames {
			b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: too many tool names in this session; a new capability is not offered",
				slog.String("capability", t.Capability))
			continue
		}
		n := t.Tool.Name
		for k := 2; taken[n] || (b.bound[n] != "" && b.bound[n] != t.Capability); k++ {
			n = fmt.Sprintf("%s_%d", t.Tool.Name, k)
		}
		taken[n] = true
		b.bound[n], b.names[t.Capability] = t.Capability, n
		out = append(out, renamed(t, n))
	}
	return out
}

func renamed(t Tool, name string) Tool {
	if t.Tool.Name == name {
		return t
	}
	c := *t.Tool
	c.Name = name
	return Tool{Tool: &c, Capability: t.Capability}
}

// notOffered answers a call to a capability tool the page does not offer
// now (the tab navigated, left the allowed sites, or the page withdrew
// it) in plain words, instead of the SDK's "unknown tool".
func (b *Bridge) notOffered(req sdk.Request) *sdk.CallToolResult {
	call, ok := req.(*sdk.CallToolRequest)
	if !ok || call.Params == nil || strings.Contains(call.Params.Name, ".") {
		return nil
	}
	name := call.Params.Name
	b.mu.Lock()
	_, offered := b.tools[name]
	capability, known := b.bound[name]
	allowed, url := b.allowed, b.page.URL
	b.mu.Unlock()
	if offered || !known {
		return nil
	}
	msg := fmt.Sprintf("%s (%s) is not offered on the page the tab shows now; nothing was sent.", name, capability)
	if b.browser != nil && !allowed {
		msg = fmt.Sprintf("The tab left the allowed site (it shows %s); %s is not offered there and nothing was sent.", orNone(url), name)
	}
	return browserError("TOOL_NOT_OFFERED", msg, "call browser.page to see where the tab is.")
}

func orNone(s string) string {
	if s == "" {
		return "a page not checked yet"
	}
	return s
}
