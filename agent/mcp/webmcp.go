package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/pagetext"
)

// The page's own WebMCP tools: on a browsing session, a page of an
// allowed origin that registered tools with WebMCP (the browser's
// document.modelContext, or a polyfill) without Pling offers them here
// too, named "webmcp.NAME" (a '.', which modeltool.Names never writes,
// so no capability can take the name) and marked as the page's words.
// Tools Pling's own mirror registered, or that carry the name of a Pling
// tool, are left out: each capability shows once, as Pling's.
//
// They are read from, and called in, the document the bridge checked
// (its own script context, the guard's pinned document): a call after
// the tab navigated waits for the new page's check, and goes nowhere if
// it fails. The page's input schema is enforced here, before the call:
// neither Chromium's executeTool nor the polyfill's checks it.

// webmcpPrefix names a page's own WebMCP tool.
const webmcpPrefix = "webmcp."

// maxPageAnswer bounds a page tool's answer as the model reads it.
const maxPageAnswer = 4000

// maxPageSchema bounds a page tool's input schema, in bytes of JSON.
const maxPageSchema = 32 << 10

// withPageTools appends the page's own WebMCP tools to tools; a failure
// to read them leaves tools as they are. b.mu is held, and b.doc is the
// document just checked.
func (b *Bridge) withPageTools(ctx context.Context, tools []Tool) []Tool {
	page, err := b.browser.WebMCPTools(ctx, b.doc)
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
		check, bad := compilePageSchema(schema)
		desc := "[The page's own words, not checked by Pling] " + pageWords(d)
		if titleSaid(title, pageWords(d)) {
			title = ""
		}
		tools = append(tools, Tool{
			Tool:       &sdk.Tool{Name: name, Title: pagetext.Escape(title), Description: desc, InputSchema: schema, Annotations: pageHints(pt.Annotations)},
			Capability: "webmcp:" + pt.Name,
			handler:    b.pageToolHandler(pt.Name, check, bad),
		})
	}
	return tools
}

// pageHints are the MCP annotations of a page tool: only what the page
// said. readOnlyHint as the page set it; WebMCP's consequentialHint (or
// an MCP destructiveHint the page wrote) as destructiveHint. A tool that
// says nothing gets no annotations, which MCP reads as a write that may
// be destructive: never "harmless" for a tool the page did not mark so.
func pageHints(page map[string]bool) *sdk.ToolAnnotations {
	ann := &sdk.ToolAnnotations{ReadOnlyHint: page["readOnlyHint"]}
	if !ann.ReadOnlyHint {
		d, said := page["consequentialHint"]
		if !said {
			d, said = page["destructiveHint"]
		}
		if said {
			ann.DestructiveHint = &d
		}
	}
	if !ann.ReadOnlyHint && ann.DestructiveHint == nil {
		return nil
	}
	return ann
}

// refuseLoader loads no schema: a page's schema may not make the bridge
// read a file or fetch a URL ($ref to anything outside it fails).
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, errors.New("a page tool's schema may refer only to itself")
}

// pageSchemaURL is where a page tool's schema is placed while compiled:
// a name that resolves nowhere.
const pageSchemaURL = "https://webmcp.pling.invalid/input-schema.json"

// compilePageSchema compiles a page tool's input schema (JSON Schema,
// 2020-12 unless it says otherwise).
func compilePageSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(raw) > maxPageSchema {
		return nil, fmt.Errorf("its input schema is over %d KiB", maxPageSchema>>10)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, errors.New("its input schema is not JSON")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(pageSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("its input schema is not one Pling can check: %s", cutShort(err.Error(), 200))
	}
	s, err := c.Compile(pageSchemaURL)
	if err != nil {
		return nil, fmt.Errorf("its input schema is not one Pling can check: %s", cutShort(err.Error(), 200))
	}
	return s, nil
}

// violation is one way the arguments fail a page tool's schema; Path is
// a JSON Pointer into them, as the runtime's INVALID_PARAMS names it.
type violation struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// maxPageViolations bounds the violations one answer lists.
const maxPageViolations = 20

// pageViolations checks args against s: every violation, a missing
// required property named at its own path.
func pageViolations(s *jsonschema.Schema, args any) []violation {
	err := s.Validate(args)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		if err != nil {
			return []violation{{Reason: cutShort(err.Error(), 200)}}
		}
		return nil
	}
	var out []violation
	var walk func(u jsonschema.OutputUnit)
	walk = func(u jsonschema.OutputUnit) {
		if u.Error != nil {
			if r, ok := u.Error.Kind.(*kind.Required); ok {
				for _, m := range r.Missing {
					out = append(out, violation{Path: pointer(u.InstanceLocation, m), Reason: "is required"})
				}
			} else {
				out = append(out, violation{Path: u.InstanceLocation, Reason: cutShort(u.Error.String(), 200)})
			}
		}
		for _, e := range u.Errors {
			walk(e)
		}
	}
	walk(*ve.BasicOutput())
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	if len(out) > maxPageViolations {
		out = out[:maxPageViolations]
	}
	return out
}

// pointer is base/key as a JSON Pointer.
func pointer(base, key string) string {
	return base + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// pageDocument is the document a page tool's call may go to: the
// guard's (waiting for a check under way), else the one the bridge last
// checked and found allowed.
func (b *Bridge) pageDocument(ctx context.Context) (Document, error) {
	if b.guard != nil {
		return b.guard.PageDocument(ctx)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.allowed || b.doc.Context == "" {
		return Document{}, &LeftSiteError{}
	}
	return b.doc, nil
}

// pageToolHandler checks the arguments against the page tool's schema,
// then calls it in the checked document, and gives its answer, cut, as
// the page's words; a refusal or failure is a tool error with the next
// step. bad is why the schema could not be compiled: then nothing is
// called (what the page accepts cannot be checked).
func (b *Bridge) pageToolHandler(name string, check *jsonschema.Schema, bad error) sdk.ToolHandler {
	tool := webmcpPrefix + name
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if bad != nil {
			return businessResult(&agent.BusinessError{Code: perr.ActionUnavailable, Capability: tool,
				Message: "The page's tool " + name + " was not called: " + bad.Error()}), nil
		}
		raw := bytes.TrimSpace(req.Params.Arguments)
		if len(raw) == 0 || string(raw) == "null" {
			raw = []byte("{}")
		}
		args, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if _, obj := args.(map[string]any); err != nil || !obj {
			e := perr.New(perr.InvalidArgs, "The arguments are not one JSON object", nil)
			return businessResult(&agent.BusinessError{Code: e.Code(), Message: e.Message(), Capability: tool}), nil
		}
		if vs := pageViolations(check, args); len(vs) > 0 {
			return businessResult(&agent.BusinessError{Code: perr.InvalidParams, Capability: tool,
				Message: "The arguments do not satisfy the page tool's input schema; it was not called",
				Details: map[string]any{"violations": vs}}), nil
		}
		doc, err := b.pageDocument(ctx)
		if err != nil {
			entry, _ := perr.Lookup(perr.ExecutionFailed)
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
				Text: string(perr.ExecutionFailed) + ": the page's WebMCP tool " + name + " was not called: " + quoteCut(err.Error(), 300) + ". Next: " + entry.Action.En,
			}}}, nil
		}
		mark := b.markNav()
		out, err := b.browser.ExecuteWebMCP(ctx, doc, name, raw)
		to, tools := b.followNavigation(ctx, mark)
		var r *sdk.CallToolResult
		failed := pageToolFailed(out) // "" for an answer that is no tool error, and on err
		switch {
		case err != nil && to != "":
			// The page went elsewhere during the call: its answer went
			// with it (the browser says its script context was destroyed).
			r = &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
				Text: "The page's tool " + name + " was called; the page left before it answered.",
			}}, StructuredContent: map[string]any{}}
		case err != nil:
			entry, _ := perr.Lookup(perr.ExecutionFailed)
			r = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
				Text: string(perr.ExecutionFailed) + ": the page's WebMCP tool " + name + " failed: " + quoteCut(err.Error(), 300) + ". Next: " + entry.Action.En,
			}}, StructuredContent: map[string]any{}}
		case failed != "":
			// The page's tool answered MCP's tool error: a failure in
			// the page's words (its text, cut), never a success.
			r = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
				Text: "The page's tool " + name + " answered with an error (its own words, not checked by Pling): " + quoteCut(failed, maxPageAnswer) +
					" Next: read what it says, correct the arguments if it names them, then decide whether to call again.",
			}}, StructuredContent: map[string]any{}}
		default:
			// An answer too long for the text is handed over whole, as a
			// capability's value is (values.go): a JSON string.
			whole, _ := json.Marshal(out)
			h := b.handOver(req.Session, whole, maxPageAnswer)
			r = &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
				Text: "The page answered (its own words, not checked by Pling): " + quoteCut(out, maxPageAnswer) + h.text(),
			}}, StructuredContent: map[string]any{}}
			h.apply(r)
		}
		navigationText(r, to, tools)
		b.takeDownloads(ctx, req.Session, r)
		if sc, _ := r.StructuredContent.(map[string]any); len(sc) == 0 {
			r.StructuredContent = nil
		}
		return boundResult(r), nil
	}
}

// pageToolFailed is the text of a page tool's answer that is MCP's tool
// error ({"content": [{"type": "text", "text": …}], "isError": true}, as
// a WebMCP tool's execute returns it and the browser serializes it): its
// text parts joined, or the whole answer when it has none; "" for any
// other answer.
func pageToolFailed(out string) string {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if !strings.HasPrefix(strings.TrimSpace(out), "{") || json.Unmarshal([]byte(out), &r) != nil || !r.IsError {
		return ""
	}
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" && c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	if len(parts) == 0 {
		return out
	}
	return strings.Join(parts, "\n")
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

// cutShort is s with every character a reader cannot see escaped, cut to
// at most n characters, with "…" where it was cut.
func cutShort(s string, n int) string { return pagetext.Line(s, n) }
