// Package mcptest reads an MCP server's answers as a model would, for
// tests and pling-bench: a call's text, and the tools array of a
// tools/list answer as it crossed the client's transport, before the SDK
// decoded it (the SDK's decoded tools encode again with its own
// defaults).
package mcptest

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools is the client's transport with the tools array of each
// tools/list answer read over it kept in Last, the last one there: one
// client lists at a time.
type Tools struct {
	sdk.Transport
	Last *atomic.Pointer[json.RawMessage]
}

// Connect connects the transport and watches what it reads.
func (t Tools) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return toolsConn{c, t.Last}, nil
}

type toolsConn struct {
	sdk.Connection
	last *atomic.Pointer[json.RawMessage]
}

func (c toolsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && len(r.Result) > 0 {
		var res struct {
			Tools json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(r.Result, &res) == nil && len(res.Tools) > 0 {
			c.last.Store(&res.Tools)
		}
	}
	return msg, err
}

// Text is the text of a call's result: its text contents, joined.
func Text(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
