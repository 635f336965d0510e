package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pling-go/pling/plinghttp"

	"github.com/pling-go/pling/internal/helpdesk"
	"github.com/pling-go/pling/internal/testing/demotest"
)

// webmcpPageJS is a page without Pling that registers its own tools with
// WebMCP (document.modelContext: the browser's, or the polyfill's); each
// tool tells the server it ran, with its arguments.
const webmcpPageJS = `<script>
const mc = document.modelContext || navigator.modelContext;
const ran = (name, args) => fetch("/ran", { method: "POST", body: JSON.stringify({ name, args }) });
mc.registerTool({ name: "lookup", title: "Look up a word", description: "Finds a word",
  inputSchema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
  annotations: { readOnlyHint: true },
  execute: async (a) => { await ran("lookup", a); return "meaning of " + a.word; } });
mc.registerTool({ name: "resize", description: "Resizes the box",
  inputSchema: { type: "object", properties: { height: { type: "number", minimum: 0 }, width: { type: "number", minimum: 0 } }, required: ["height", "width"] },
  execute: async (a) => { await ran("resize", a); return "resized to " + a.width + "x" + a.height; } });
mc.registerTool({ name: "delete_alerts", description: "Delete every alert",
  inputSchema: { type: "object", properties: {} },
  execute: async () => { await ran("delete_alerts", {}); return "deleted"; } });
mc.registerTool({ name: "wipe", description: "Wipes the box", annotations: { consequentialHint: true },
  inputSchema: { type: "object", properties: {} },
  execute: async () => { await ran("wipe", {}); return "wiped"; } });
mc.registerTool({ name: "book", description: "Books a table", annotations: { readOnlyHint: true },
  inputSchema: { type: "object", properties: { seats: { type: "integer" } } },
  execute: async (a) => ({ content: [{ type: "text", text: "No table for " + a.seats + " tonight" }], isError: true }) });
mc.registerTool({ name: "leave", description: "Goes to the partner site",
  inputSchema: { type: "object", properties: {} },
  execute: async () => { await ran("leave", {}); location.href = window.partner + "/tools.html"; return "leaving"; } });
</script>`

// webmcpSite serves the WebMCP page (with the polyfill first, given its
// script) and records the tools that ran on it.
type webmcpSite struct {
	url string
	ran bodyLog
}

// tools are the names of the tools that ran, in order.
func (s *webmcpSite) tools() []string {
	var names []string
	for _, b := range s.ran.bodies() {
		var got struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal([]byte(b), &got)
		names = append(names, got.Name)
	}
	return names
}

func newWebMCPSite(t *testing.T, host string, polyfill []byte, partner func() string) *webmcpSite {
	t.Helper()
	s := &webmcpSite{ran: bodyLog{limit: 4096}}
	head := ""
	mux := http.NewServeMux()
	if polyfill != nil {
		head = `<script src="/polyfill.js"></script>`
		mux.HandleFunc("GET /polyfill.js", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Write(polyfill)
		})
	}
	mux.HandleFunc("GET /tools.html", htmlPage(func() string {
		return `<!doctype html><html><head><title>Box tools</title>` + head + `<script>window.partner = ` +
			strconvQuote(partner()) + `;</script></head><body><h1>Box</h1>` + webmcpPageJS + `</body></html>`
	}))
	mux.HandleFunc("POST /ran", s.ran.handle)
	s.url = serveAt(t, host, mux)
	return s
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestMCPWebMCPPage runs the pling binary as a child process, an MCP
// server over stdio driven by the official Go SDK's client, on a page
// without Pling that registers its own WebMCP tools: with Chromium's
// native WebMCP (which pling mcp's browser turns on), and with
// @mcp-b/webmcp-polyfill in a browser without it (reached through
// $PLING_CDP). The page's tools are listed as webmcp.NAME and called;
// their input schema is enforced before the call (nothing reaches the
// page); browser.page lists them; a tool that takes the tab to another
// origin leaves no tool behind, and that origin's page is never called.
func TestMCPWebMCPPage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pling and drives Chromium: not in -short mode")
	}
	bin := buildPling(t)
	eachWebMCP(t, func(t *testing.T, polyfill []byte, env []string) {
		var partner *webmcpSite
		site := newWebMCPSite(t, "localhost", polyfill, func() string { return partner.url })
		partner = newWebMCPSite(t, "127.0.0.1", polyfill, func() string { return site.url })
		pp := startPlingProcess(t, bin, env, "mcp", site.url+"/tools.html")

		tools := pp.waitTool(t, "webmcp.resize")
		t.Run("listed", func(t *testing.T) {
			for _, name := range []string{"webmcp.lookup", "webmcp.resize", "webmcp.delete_alerts", "webmcp.leave"} {
				if tools[name] == nil {
					t.Errorf("tools/list lacks %s", name)
				}
			}
			if l := tools["webmcp.lookup"]; l != nil && (l.Annotations == nil || !l.Annotations.ReadOnlyHint || !strings.HasPrefix(l.Description, "[The page's own words")) {
				t.Errorf("webmcp.lookup listed as %+v", l)
			}
		})
		t.Run("hints", func(t *testing.T) {
			// Only what the page said: a tool without hints is, to
			// MCP, a write that may be destructive; nothing the page
			// did not mark read-only is called harmless.
			for _, name := range []string{"webmcp.resize", "webmcp.delete_alerts", "webmcp.wipe"} {
				tl := tools[name]
				if tl == nil {
					continue
				}
				if a := tl.Annotations; a != nil && (a.ReadOnlyHint || (a.DestructiveHint != nil && !*a.DestructiveHint)) {
					b, _ := json.Marshal(a)
					t.Errorf("%s is listed with %s; the page said nothing of the kind", name, b)
				}
			}
		})
		t.Run("call", func(t *testing.T) {
			out, res := pp.call(t, "webmcp.lookup", map[string]any{"word": "pling"})
			if res.IsError || !strings.Contains(out, "meaning of pling") {
				t.Errorf("webmcp.lookup answered (error %v) %q", res.IsError, out)
			}
		})
		t.Run("a tool error", func(t *testing.T) {
			out, res := pp.call(t, "webmcp.book", map[string]any{"seats": 12})
			if !res.IsError || !strings.Contains(out, "No table for 12 tonight") || strings.Contains(out, "isError") {
				t.Errorf("webmcp.book, whose answer is MCP's tool error, answered (error %v) %q; want a failed call in the page's words", res.IsError, out)
			}
		})
		t.Run("schema", func(t *testing.T) {
			for _, bad := range []struct {
				name  string
				args  map[string]any
				field string
			}{
				{"below its minimum", map[string]any{"height": -3, "width": 2}, `"/height"`},
				{"a required field missing", map[string]any{"height": 1}, `"/width"`},
				{"the wrong type", map[string]any{"height": "tall", "width": 2}, `"/height"`},
			} {
				out, res := pp.call(t, "webmcp.resize", bad.args)
				if !res.IsError || !strings.HasPrefix(out, "INVALID_PARAMS: ") || !strings.Contains(out, bad.field) {
					t.Errorf("%s: webmcp.resize %v answered (error %v) %q; want INVALID_PARAMS naming %s", bad.name, bad.args, res.IsError, out, bad.field)
				}
			}
			if ran := site.tools(); slices.Contains(ran, "resize") {
				t.Errorf("the page's resize ran on arguments its schema refuses: %v", ran)
			}
			out, res := pp.call(t, "webmcp.resize", map[string]any{"height": 3, "width": 2})
			if res.IsError || !strings.Contains(out, "resized to 2x3") {
				t.Errorf("webmcp.resize on valid arguments answered (error %v) %q", res.IsError, out)
			}
		})
		t.Run("browser.page", func(t *testing.T) {
			out, _ := pp.call(t, "browser.page", nil)
			if !strings.Contains(out, "webmcp.lookup") || strings.Contains(out, "no page tools") {
				t.Errorf("browser.page does not list the page's WebMCP tools:\n%s", out)
			}
		})
		t.Run("left the allowed site", func(t *testing.T) {
			out, res := pp.call(t, "webmcp.leave", nil)
			if res.IsError || !strings.Contains(out, partner.url) {
				t.Errorf("webmcp.leave answered (error %v) %q; want it to say the tab went to %s", res.IsError, out, partner.url)
			}
			out, res = pp.call(t, "webmcp.lookup", map[string]any{"word": "secret"})
			if !res.IsError {
				t.Errorf("a page tool was called on a page outside the allowed sites: %q", out)
			}
			for _, tl := range pp.list(t) {
				if strings.HasPrefix(tl.Name, "webmcp.") {
					t.Errorf("outside the allowed sites, tools/list has %s", tl.Name)
				}
			}
			if ran := partner.tools(); len(ran) > 0 {
				t.Errorf("the page outside the allowed sites ran %v", ran)
			}
		})
	})
}

// TestMCPListChangedOncePerNavigation runs the pling binary as an MCP
// server over stdio on the demo site: right after start-up, a client
// that listed the tools hears of no change (the list is the one it got),
// and each navigation between pages of different tools sends at most
// one notifications/tools/list_changed (one per settled page), however
// many steps the browser reports for it.
func TestMCPListChangedOncePerNavigation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pling and drives Chromium: not in -short mode")
	}
	base := demotest.Serve(t, demotest.Dist(t))
	bin := buildPling(t)
	pp := startPlingProcess(t, bin, nil, "mcp", base+"/shop/")
	pp.waitTool(t, "cart_add")
	if n := pp.quiet(); n != 0 {
		t.Errorf("after start-up and the first tools/list, %d tools/list_changed for the list the client has", n)
	}
	for i, page := range []string{"/orders/", "/shop/", "/settings/", "/orders/"} {
		before := pp.changes()
		out, res := pp.call(t, "browser.open", map[string]any{"url": base + page})
		if res.IsError {
			t.Fatalf("browser.open %s: %s", page, out)
		}
		got := pp.quiet() - before
		t.Logf("navigation %d to %s: %d tools/list_changed", i+1, page, got)
		if got > 1 {
			t.Errorf("navigation %d to %s sent %d tools/list_changed, want at most one", i+1, page, got)
		}
		pp.list(t) // the client lists again, as it does when told
	}
}

// TestMCPNavigatingCallSaysWhere runs the pling binary over stdio on the
// help desk and calls open__ticket, which takes the tab to the ticket's
// page, again and again: every result says where the tab went (the page
// leaving under the call's last look is a navigation too), and each
// navigation sends at most one tools/list_changed.
func TestMCPNavigatingCallSaysWhere(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pling and drives Chromium: not in -short mode")
	}
	h, err := helpdesk.New(os.DirFS(demotest.Dist(t)), plinghttp.WithBrotli(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	pp := startPlingProcess(t, buildPling(t), nil, "mcp", hs.URL+"/tickets/")
	for i, id := range []string{"1044", "1045", "1046", "1047", "1048", "1049"} {
		pp.waitTool(t, "open__ticket")
		if _, res := pp.call(t, "tickets_search", map[string]any{"query": "T-" + id}); res.IsError {
			t.Fatalf("tickets_search T-%s failed", id)
		}
		pp.list(t)
		before := pp.quiet() // the search's own change (its tools' examples) is not the navigation's
		out, res := pp.call(t, "open__ticket", map[string]any{"record": "T-" + id})
		if want := "The page went to " + hs.URL + "/tickets/view.html?id=t" + id; res.IsError || !strings.Contains(out, want) {
			t.Errorf("call %d: open__ticket T-%s answered (error %v) %q; want it to say %q", i+1, id, res.IsError, out, want)
		}
		pp.list(t)
		if n := pp.quiet() - before; n > 1 {
			t.Errorf("call %d: the navigation sent %d tools/list_changed, want at most one", i+1, n)
		}
		if _, res := pp.call(t, "browser.open", map[string]any{"url": hs.URL + "/tickets/"}); res.IsError {
			t.Fatal("browser.open /tickets/ failed")
		}
	}
}
