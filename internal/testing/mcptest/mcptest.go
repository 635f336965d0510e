// Package mcptest holds what the tests and benchmarks that drive an MCP
// server with the official Go SDK's client read from its answers.
package mcptest

import (
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Text is the text of a tool's result: its text parts, joined in order;
// other parts (links, images) are left out.
func Text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
