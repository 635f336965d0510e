package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
)

// A page's own WebMCP tools, registered with the browser's native
// document.modelContext.
const pageToolsJS = `<script>
document.modelContext.registerTool({ name: "lookup", title: "Look up a word", description: "Finds a word",
  inputSchema: { type: "object", properties: { word: { type: "string" } } }, annotations: { readOnlyHint: true },
  execute: async (args) => "meaning of " + args.word });
</script>`

// pling mcp speaks to a page's own WebMCP tools (Chromium's native API):
// on a page without Pling they are listed as webmcp.NAME in the page's
// words and called through executeTool; on a page with both, a
// capability Pling mirrors shows once, as Pling's tool.
func TestPageWebMCPTools(t *testing.T) {
	d := browserDist(t)
	mux := http.NewServeMux()
	mux.Handle("/pling/", http.StripPrefix("/pling/", http.FileServer(http.Dir(d))))
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(`<!doctype html><html><head><title>t</title></head><body>` + body + `</body></html>`))
		}
	}
	mux.Handle("/plain.html", page(pageToolsJS))
	mux.Handle("/both.html", page(pageToolsJS+`<script src="/pling/pling.js" data-expose="*"></script>
<script>pling.action({ id: "lookup", title: "Look up a word", risk: "read", params: { word: { type: "string" } }, run: (i) => "pling: " + i.word });
pling.action({ id: "note", title: "Note", run: () => true });</script>`))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := cdp.Start(ctx, hs.URL+"/plain.html", cdp.Options{Timeout: 20 * time.Second,
		Flags: map[string]any{"enable-features": cdp.WebMCPFeatures}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	s := connect(t, plingmcp.NewBridge(agent.New(p), plingmcp.WithBrowser(p, hs.URL)))

	names := waitTools(t, s, "webmcp.lookup", true)
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
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

	// Both: Pling's mirror registers lookup too (the page's own
	// registration of that name is refused or replaced); the agent sees
	// Pling's lookup and note, and no webmcp.* copy of them.
	call(t, s, "browser.open", map[string]any{"url": hs.URL + "/both.html"})
	names = waitTools(t, s, "note", true)
	if slices.Contains(names, "webmcp.lookup") || slices.Contains(names, "webmcp.note") || !slices.Contains(names, "lookup") {
		t.Errorf("a page with both lists %v", names)
	}
}
