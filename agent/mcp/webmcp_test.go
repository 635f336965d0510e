package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/internal/testing/npmtest"
)

// A page's own WebMCP tools, registered with document.modelContext (the
// browser's own, or the polyfill's).
const pageToolsJS = `<script>
document.modelContext.registerTool({ name: "lookup", title: "Look up a word", description: "Finds a word",
  inputSchema: { type: "object", properties: { word: { type: "string" } } }, annotations: { readOnlyHint: true },
  execute: async (args) => "meaning of " + args.word });
document.modelContext.registerTool({ name: "export", description: "Exports the words",
  inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true },
  execute: async () => "word,meaning\n" + Array.from({ length: 2000 }, (_, i) => "w" + i + ",the meaning of word " + i + "\u202e").join("\n") });
document.modelContext.registerTool({ name: "reserve", description: "Reserves a table",
  inputSchema: { type: "object", properties: { seats: { type: "integer" } } },
  execute: async (args) => ({ content: [{ type: "text", text: "No table for " + args.seats + " tonight" }], isError: true }) });
</script>`

// pling mcp speaks to a page's own WebMCP tools (Chromium's native API):
// on a page without Pling they are listed as webmcp.NAME in the page's
// words and called through executeTool; on a page with both, a
// capability Pling mirrors shows once, as Pling's tool.
func TestPageWebMCPTools(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	testPageWebMCPTools(t, nil)
}

// The same through the WebMCP polyfill from npm (@mcp-b/webmcp-polyfill),
// in a browser without the native API: the page's document.modelContext
// is the polyfill's, whose executeTool takes the arguments as JSON text
// where Chromium's takes an object (cdp.Page.ExecuteWebMCP gives both).
func TestPageWebMCPToolsPolyfill(t *testing.T) {
	browserDist(t) // skips in -short before npm is asked
	testPageWebMCPTools(t, npmtest.WebMCPPolyfill(t))
}

// testPageWebMCPTools runs the pages in Chromium with its native WebMCP
// on, or, given the polyfill's script, without it and with the polyfill
// loaded first on every page.
func testPageWebMCPTools(t *testing.T, polyfill []byte) {
	d := browserDist(t)
	mux := http.NewServeMux()
	mux.Handle("/pling/", http.StripPrefix("/pling/", http.FileServer(http.Dir(d))))
	head := ""
	flags := map[string]any{"enable-features": cdp.WebMCPFeatures}
	if polyfill != nil {
		head = `<script src="/polyfill.js"></script>`
		flags = nil
		mux.HandleFunc("/polyfill.js", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Write(polyfill)
		})
	}
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(`<!doctype html><html><head><title>t</title>` + head + `</head><body>` + body + `</body></html>`))
		}
	}
	mux.Handle("/none.html", page(""))
	mux.Handle("/plain.html", page(pageToolsJS))
	mux.Handle("/both.html", page(pageToolsJS+`<script src="/pling/pling.js" data-expose="*"></script>
<script>pling.action({ id: "lookup", title: "Look up a word", risk: "read", params: { word: { type: "string" } }, run: (i) => "pling: " + i.word });
pling.action({ id: "note", title: "Note", run: () => true });</script>`))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := cdp.Start(ctx, hs.URL+"/plain.html", cdp.Options{Timeout: 20 * time.Second, Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if polyfill != nil {
		// Without the flag the browser has no model context of its own, so
		// the polyfill's is the one the bridge reads and calls.
		if _, err := p.Navigate(ctx, hs.URL+"/none.html"); err != nil {
			t.Fatal(err)
		}
		doc, err := p.Document(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tools, err := p.WebMCPTools(ctx, doc); err != nil || len(tools) != 0 {
			t.Fatalf("a page with only the polyfill lists %v, %v", tools, err)
		}
		if native, err := chromedp.Run(p.Context(), chromedp.Evaluate[bool](`!!document.modelContext && !String(Object.getOwnPropertyDescriptor(Document.prototype, "modelContext").get).includes("[native code]")`)); err != nil || !native {
			t.Fatalf("the polyfill did not install its own document.modelContext (%v)", err)
		}
		if _, err := p.Navigate(ctx, hs.URL+"/plain.html"); err != nil {
			t.Fatal(err)
		}
	}
	s := connect(t, plingmcp.NewBridge(agent.New(p), plingmcp.WithBrowser(p, hs.URL)))

	names := waitTools(t, s, "webmcp.lookup", true)
	res := s.listTools(t)
	for _, tl := range res.Tools {
		if tl.Name == "webmcp.lookup" {
			if tl.Title != "Look up a word" || !strings.HasPrefix(tl.Description, "[The page's own words") || tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
				t.Errorf("webmcp.lookup listed as %+v", tl)
			}
		}
	}
	out := call(t, s, "webmcp.lookup", map[string]any{"word": "pling"})
	if out.IsError || !strings.Contains(text(out), "meaning of pling") {
		t.Errorf("webmcp.lookup answered %v: %s", out.IsError, text(out))
	}
	t.Logf("plain page tools: %v", names)

	// A tool that answers MCP's tool error failed, in the page's words.
	out = call(t, s, "webmcp.reserve", map[string]any{"seats": 12})
	if !out.IsError || !strings.Contains(text(out), "answered with an error") || !strings.Contains(text(out), "No table for 12 tonight") || strings.Contains(text(out), "isError") {
		t.Errorf("webmcp.reserve answered %v: %s", out.IsError, text(out))
	}

	// An answer too long for the text is handed over whole, as a
	// capability's value is: linked pages whose text joined is the
	// answer as one JSON string.
	out = call(t, s, "webmcp.export", map[string]any{})
	var links []string
	for _, c := range out.Content {
		if l, ok := c.(*sdk.ResourceLink); ok {
			links = append(links, l.URI)
		}
	}
	var joined strings.Builder
	for _, l := range links {
		rr, err := s.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: l})
		if err != nil {
			t.Fatalf("resources/read %s: %v", l, err)
		}
		joined.WriteString(rr.Contents[0].Text)
	}
	var answer string
	if err := json.Unmarshal([]byte(joined.String()), &answer); err != nil || len(links) < 2 ||
		!strings.HasPrefix(answer, "word,meaning\nw0,the meaning of word 0\u202e\nw1,") || !strings.HasSuffix(answer, "word 1999\u202e") {
		t.Errorf("webmcp.export: %d links, answer %.80q…, %v; text %.300s", len(links), answer, err, text(out))
	}

	// Both: Pling's mirror registers lookup too (the page's own
	// registration of that name is refused or replaced); the agent sees
	// Pling's lookup and note, and no webmcp.* copy of them.
	call(t, s, "browser.open", map[string]any{"url": hs.URL + "/both.html"})
	names = waitTools(t, s, "note", true)
	if slices.Contains(names, "webmcp.lookup") || slices.Contains(names, "webmcp.note") || !slices.Contains(names, "lookup") {
		t.Errorf("a page with both lists %v", names)
	}
}
