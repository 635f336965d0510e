package mcp

import (
	"context"
	"encoding/json"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent/cdp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/pagetext"
)

// The page's own WebMCP tools: on a browsing session, a page of an
// allowed origin that registered tools with WebMCP (the browser's
// document.modelContext, or a polyfill) without Pling offers them here
// too, named "webmcp.NAME" (a '.', which runtime.ToolNames never writes,
// so no capability can take the name) and marked as the page's words.
// Tools Pling's own mirror registered, or that carry the name of a Pling
// tool, are left out: each capability shows once, as Pling's.

// WebMCPBrowser is a Browser that also reaches the page's WebMCP tools;
// *cdp.Page is one.
type WebMCPBrowser interface {
	WebMCPTools(ctx context.Context) ([]cdp.WebMCPTool, error)
	ExecuteWebMCP(ctx context.Context, name string, args json.RawMessage) (string, error)
}

// webmcpPrefix names a page's own WebMCP tool.
const webmcpPrefix = "webmcp."

// maxPageAnswer bounds a page tool's answer as the model reads it.
const maxPageAnswer = 4000

// withPageTools appends the page's own WebMCP tools to tools; a failure
// to read them leaves tools as they are.
func (b *Bridge) withPageTools(ctx context.Context, tools []Tool) []Tool {
	wb, ok := b.browser.(WebMCPBrowser)
	if !ok {
		return tools
	}
	page, err := wb.WebMCPTools(ctx)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelDebug, "pling mcp: the page's WebMCP tools", slog.String("error", err.Error()))
		return tools
	}
	taken := make(map[string]bool, len(tools))
	for _, t := range tools {
		taken[t.Tool.Name] = true
	}
	for _, pt := range page {
		name := webmcpPrefix + pt.Name
		if pt.Pling || !toolNameChars(pt.Name) || taken[pt.Name] || taken[name] || len(name) > 64 {
			continue
		}
		taken[name] = true
		schema := pt.InputSchema
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		d, _ := cutText(pt.Description, MaxDescriptionLen)
		title, _ := cutText(pt.Title, MaxTitleLen)
		desc := "[The page's own words, not checked by Pling] " + pageWords(d)
		ann := &sdk.ToolAnnotations{ReadOnlyHint: pt.Annotations["readOnlyHint"]}
		if !ann.ReadOnlyHint {
			consequential := pt.Annotations["consequentialHint"]
			ann.DestructiveHint = &consequential
		}
		tools = append(tools, Tool{
			Tool:       &sdk.Tool{Name: name, Title: pagetext.Escape(title), Description: desc, InputSchema: schema, Annotations: ann},
			Capability: "webmcp:" + pt.Name,
			handler:    b.pageToolHandler(wb, pt.Name),
		})
	}
	return tools
}

// pageToolHandler calls the page's WebMCP tool and gives its answer, cut,
// as the page's words; a failure is a tool error with the next step.
func (b *Bridge) pageToolHandler(wb WebMCPBrowser, name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		out, err := wb.ExecuteWebMCP(ctx, name, req.Params.Arguments)
		if err != nil {
			entry, _ := perr.Lookup(perr.ExecutionFailed)
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
				Text: string(perr.ExecutionFailed) + ": the page's WebMCP tool " + name + " failed: " + quoteCut(err.Error(), 300) + ". Next: " + entry.Action.En,
			}}}, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
			Text: "The page answered (its own words, not checked by Pling): " + quoteCut(out, maxPageAnswer),
		}}}, nil
	}
}

// toolNameChars reports whether a page's WebMCP tool name is one a model
// API takes (letters, digits, '_', '-', '.'), so that the name it is
// listed under cannot carry text of its own.
func toolNameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return s != ""
}
