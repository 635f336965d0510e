package cdp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pling-go/pling/agent"
)

// WebMCPTool is a tool the current page registered with WebMCP
// (document.modelContext: the browser's own, or a polyfill's). Its words
// are the page's, not Pling's: an agent reads them as such.
type WebMCPTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// Annotations are the page's boolean hints (readOnlyHint,
	// consequentialHint, …) as it wrote them: a hint it left out is
	// absent, not false.
	Annotations map[string]bool `json:"annotations"`
	// Pling is set for a tool Pling's own mirror (webmcp.js) registered:
	// the same capability an agent reaches through the Surface.
	Pling bool `json:"pling"`
}

// maxWebMCPTools bounds the tools read from one page.
const maxWebMCPTools = 128

// maxWebMCPAnswer bounds what is read of the page's tool list and of a
// tool's answer (boundedJS), in UTF-16 code units.
const maxWebMCPAnswer = 1 << 20

const webmcpToolsJS = `
  const mc = document.modelContext || navigator.modelContext;
  if (!mc || typeof mc.getTools !== "function") return "[]";
  const mine = window.pling && window.pling._webmcp ? window.pling._webmcp.tools : new Map();
  const tools = (await mc.getTools()).slice(0, 128);
  return JSON.stringify(tools.map((t) => ({
    name: String(t.name || ""), title: String(t.title || ""), description: String(t.description || "").slice(0, 2000),
    inputSchema: t.inputSchema && typeof t.inputSchema === "object" ? t.inputSchema : { type: "object" },
    annotations: Object.fromEntries(Object.entries(t.annotations && typeof t.annotations === "object" ? t.annotations : {})
      .filter(([, v]) => typeof v === "boolean")), pling: mine.has(t.name) })));`

// WebMCPTools lists the tools doc registered with WebMCP, read in doc's
// own script context (the browser refuses once doc is gone); none where
// the page has no model context. doc is one Document read from the
// browser: a tab that shows another document fails with ErrDocumentGone.
func (p *Page) WebMCPTools(ctx context.Context, doc Document) ([]WebMCPTool, error) {
	text, err := p.evalIn(ctx, doc, webmcpToolsJS)
	if err != nil {
		return nil, fmt.Errorf("cdp: reading the page's WebMCP tools: %w", err)
	}
	var tools []WebMCPTool
	if err := json.Unmarshal([]byte(text), &tools); err != nil {
		return nil, fmt.Errorf("cdp: reading the page's WebMCP tools: %w", err)
	}
	if len(tools) > maxWebMCPTools {
		tools = tools[:maxWebMCPTools]
	}
	return tools, nil
}

// ExecuteWebMCP calls doc's WebMCP tool name with args (one JSON object)
// through executeTool, in doc's own script context, and returns what the
// page answered, as text. Right before the call it reads the tab's
// document from the browser again and calls only if it is still doc
// (else ErrDocumentGone, and nothing ran).
func (p *Page) ExecuteWebMCP(ctx context.Context, doc Document, name string, args json.RawMessage) (string, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return "", fmt.Errorf("cdp: the arguments are not one JSON object: %w", agent.ErrNotSent)
	}
	n, _ := json.Marshal(name)
	a, _ := json.Marshal(obj)
	js := `
  const mc = document.modelContext || navigator.modelContext;
  if (!mc || typeof mc.executeTool !== "function") throw "the page has no WebMCP model context";
  const tool = (await mc.getTools()).find((t) => t.name === ` + string(n) + `);
  if (!tool) throw "the page has no such WebMCP tool";
  // Chromium's own executeTool takes the arguments as an object and
  // refuses a string; the WebMCP polyfill takes their JSON text and
  // JSON.parse refuses an object. An object whose toString gives its
  // JSON (not enumerable, so not an argument) serves both.
  const args = Object.defineProperty(` + string(a) + `, "toString", { value() { return JSON.stringify(this); } });
  const r = await mc.executeTool(tool, args);
  return typeof r === "string" ? r : JSON.stringify(r);`
	out, err := p.evalIn(ctx, doc, js)
	if err != nil {
		return "", fmt.Errorf("cdp: the page's WebMCP tool %s: %w", name, err)
	}
	return out, nil
}

// evalIn evaluates body (a function body that gives a string, bounded in
// the page: evalBounded) in doc's own script context, once the browser
// says the tab still shows doc.
func (p *Page) evalIn(ctx context.Context, doc Document, body string) (string, error) {
	if err := p.goneErr(); err != nil {
		return "", err
	}
	tab := p.cur()
	if err := p.checkBound(ctx, tab, &doc); err != nil {
		return "", err
	}
	tctx, cancel := p.bounded(ctx, tab)
	defer cancel()
	return evalBounded(tctx, body, maxWebMCPAnswer, doc.Context)
}

// WebMCPFeatures is the --enable-features value that turns Chromium's
// native WebMCP (document.modelContext) on beside chromedp's own
// features: Chromium keeps only the last --enable-features switch.
const WebMCPFeatures = "NetworkService,NetworkServiceInProcess,WebMCP"
