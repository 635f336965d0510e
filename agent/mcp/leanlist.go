package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// leanLists is a receiving middleware: a tools/list answer leaves
// without the hints MCP reads the same way when they are absent. The SDK
// writes readOnlyHint and idempotentHint on every annotated tool, false
// included (its switch for leaving them out is process-wide and read at
// start-up), and an agent reads every list whole, again after each
// tools/list_changed: on the demo sites those two false hints were 1.4 KB
// of the lists the agent benchmark's tasks received (RATIONALE.md).
func leanLists(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if l, ok := res.(*sdk.ListToolsResult); ok && method == "tools/list" {
			return leanList{l}, err
		}
		return res, err
	}
}

// leanList is a tools/list answer that writes each tool's annotations
// without readOnlyHint and idempotentHint when they are false, MCP's
// reading of them when absent, and no annotations when nothing is left.
// The hints the bridge set (destructiveHint, openWorldHint) are written as
// set; everything else is the SDK's.
type leanList struct{ *sdk.ListToolsResult }

func (l leanList) MarshalJSON() ([]byte, error) {
	type plain sdk.ListToolsResult
	whole, err := json.Marshal((*plain)(l.ListToolsResult))
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(whole, &m); err != nil {
		return nil, err
	}
	tools := make([]json.RawMessage, 0, len(l.Tools))
	for _, t := range l.Tools {
		raw, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		if t.Annotations != nil {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(raw, &fields); err != nil {
				return nil, err
			}
			delete(fields, "annotations")
			if a := leanHints(t.Annotations); len(a) > 0 {
				fields["annotations"], _ = json.Marshal(a)
			}
			if raw, err = json.Marshal(fields); err != nil {
				return nil, err
			}
		}
		tools = append(tools, raw)
	}
	m["tools"], _ = json.Marshal(tools)
	return json.Marshal(m)
}

// leanHints are the hints of a without the SDK's false readOnlyHint and
// idempotentHint.
func leanHints(a *sdk.ToolAnnotations) map[string]any {
	out := map[string]any{}
	if a.DestructiveHint != nil {
		out["destructiveHint"] = *a.DestructiveHint
	}
	if a.OpenWorldHint != nil {
		out["openWorldHint"] = *a.OpenWorldHint
	}
	if a.ReadOnlyHint {
		out["readOnlyHint"] = true
	}
	if a.IdempotentHint {
		out["idempotentHint"] = true
	}
	if a.Title != "" {
		out["title"] = a.Title
	}
	return out
}
