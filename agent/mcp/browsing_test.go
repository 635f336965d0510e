package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"

	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/jsontrees"
	"github.com/pling-go/pling/internal/testing/mcptest"
	"github.com/pling-go/pling/internal/testing/require"
)

// demoSession serves the demo site and starts a browsing session on
// start, bridged with the official Go SDK's client over in-memory
// transports. It skips without the built module or a browser.
func demoSession(t *testing.T, start string) (*session, string) {
	t.Helper()
	s, _, base := demoSessionPage(t, start)
	return s, base
}

func demoSessionPage(t *testing.T, start string) (*session, *cdp.Page, string) {
	t.Helper()
	base := demotest.Serve(t, browserDist(t))
	s, p := browse(t, base, start)
	return s, p, base
}

// browserDist readies a test that opens the module in Chromium: not
// under -short, the browser required (require.Chromium), and the built
// module's directory returned (demotest.Dist).
func browserDist(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	d := demotest.Dist(t)
	require.Chromium(t)
	return d
}

// browse opens base+start in Chromium and bridges the page, as pling mcp
// bridges it, with the official SDK's client.
func browse(t *testing.T, base, start string) (*session, *cdp.Page) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := cdp.Start(ctx, base+start, cdp.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	b := plingmcp.NewBridge(agent.New(p), plingmcp.WithBrowser(p, base))
	return connect(t, b), p
}

// call calls a tool and fails t on a protocol error; a tool error is in
// the result.
func call(t *testing.T, s *session, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// text is a result's text (mcptest.Text), which these tests read often.
func text(res *sdk.CallToolResult) string { return mcptest.Text(res) }

// waitTools waits until the tool list has (or lacks) name.
func waitTools(t *testing.T, s *session, name string, present bool) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		names := s.toolNames(t)
		has := false
		for _, n := range names {
			has = has || n == name
		}
		if has == present {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("tool %s present=%v never; tools %v", name, present, names)
		}
		select {
		case <-s.changed:
		case <-time.After(time.Second):
		}
	}
}

// One server, one browsing session, two pages: the agent adds a named
// product on the shop, opens the checkout (the tools follow the page,
// with tools/list_changed), places the order and reads the total; the
// page then redirects by itself to a page without Pling, which the bridge
// reports with its outline.
func TestTwoPageTask(t *testing.T) {
	s, base := demoSession(t, "/shop/")
	names := waitTools(t, s, "cart_add", true)
	for _, want := range []string{"browser.back", "browser.open", "browser.page"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	add := call(t, s, "cart_add", map[string]any{"sku": "socks-wool", "qty": 2})
	if add.IsError {
		t.Fatalf("cart_add: %s", text(add))
	}
	if got := text(add); !strings.HasPrefix(got, "Done: cart.add.") || !strings.Contains(got, "Changed: cart.count, cart.lines, cart.total") || strings.Contains(got, `"requestId"`) {
		t.Errorf("cart_add text is not a short account of what happened:\n%s", got)
	}
	// The text names the changed states; their values are in
	// structuredContent.
	if ch, _ := jsontrees.RoundTrip(t, add.StructuredContent).(map[string]any)["changed"].(map[string]any); ch["cart.count"] == nil ||
		ch["cart.count"].(map[string]any)["before"] != float64(0) || strings.Contains(text(add), "→") {
		t.Errorf("cart_add: the old value belongs in structuredContent, not the text: %v\n%s", ch, text(add))
	}

	open := call(t, s, "browser.open", map[string]any{"url": "/checkout/"})
	if open.IsError || !strings.Contains(text(open), "Checkout") || !strings.Contains(text(open), "order_place") {
		t.Fatalf("browser.open /checkout/: %s", text(open))
	}
	// The text names the page's tools; the structured content says what
	// the page is, not the tool names again (they come with tools/list).
	osc := jsontrees.RoundTrip(t, open.StructuredContent).(map[string]any)
	if pg, _ := osc["page"].(map[string]any); pg["pling"] != true || !strings.HasSuffix(pg["url"].(string), "/checkout/") {
		t.Errorf("browser.open page: %v", osc)
	}
	if _, ok := osc["tools"]; ok {
		t.Errorf("browser.open repeats the tool names in structuredContent: %v", osc)
	}
	names = waitTools(t, s, "order_place", true)
	if strings.Contains(strings.Join(names, " "), "cart_add") {
		t.Errorf("the shop's tools stayed after the navigation: %v", names)
	}
	place := call(t, s, "order_place", nil)
	if place.IsError {
		t.Fatalf("order_place: %s", text(place))
	}
	if got := text(place); !strings.Contains(got, `\"total\":28`) || !strings.Contains(got, "checkout.status equal \"placed\" met") {
		t.Errorf("order_place text lacks the total or the evidence:\n%s", got)
	}

	// The page redirects to the confirmation, a page without Pling: the
	// page's tools go, and browser.page outlines it.
	waitTools(t, s, "order_place", false)
	var page *sdk.CallToolResult
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if page = call(t, s, "browser.page", nil); strings.Contains(text(page), "/checkout/placed/") {
			break
		}
	}
	if got := text(page); !strings.Contains(got, "does not speak Pling") || !strings.Contains(got, `# "Thank you: order NW-`) ||
		!strings.Contains(got, `link: "Continue shopping" -> "/shop/"`) {
		t.Errorf("browser.page on the confirmation:\n%s", got)
	}

	back := call(t, s, "browser.back", nil)
	if back.IsError || !strings.Contains(text(back), "/checkout/\n") {
		t.Errorf("browser.back: %s", text(back))
	}

	far := call(t, s, "browser.open", map[string]any{"url": "https://example.com/"})
	if !far.IsError || !strings.HasPrefix(text(far), "ORIGIN_NOT_ALLOWED: ") || !strings.Contains(text(far), base) {
		t.Errorf("browser.open outside the origin: %s", text(far))
	}
	if page := call(t, s, "browser.page", nil); page.IsError || strings.Contains(text(page), "Tabs") {
		t.Errorf("browser.page lists tabs with one tab open: %s", text(page))
	}
}

// Records by label: "#1250" is ord_250, offscreen on the 500-row orders
// page; approve__order says so in its description, and one call brings
// the row into view (open@order) and approves it.
func TestRecordByLabel(t *testing.T) {
	s, _ := demoSession(t, "/orders/")
	waitTools(t, s, "approve__order", true)
	res := s.listTools(t)
	var approve *sdk.Tool
	for _, tl := range res.Tools {
		if tl.Name == "approve__order" {
			approve = tl
		}
	}
	for _, want := range []string{"Out of view", "first runs open__order", "to bring the order into view"} {
		if !strings.Contains(approve.Description, want) {
			t.Errorf("approve__order description lacks %q:\n%s", want, approve.Description)
		}
	}
	if !strings.Contains(jsontrees.RoundTrip(t, approve.InputSchema).(map[string]any)["properties"].(map[string]any)["record"].(map[string]any)["description"].(string), `"#1001"`) {
		t.Errorf("record property: %s", approve.InputSchema)
	}

	// ord_250 is pending on the seeded page (the test fails loudly if the
	// seed changes); find a pending one by label otherwise.
	got := call(t, s, "approve__order", map[string]any{"record": "#1250"})
	if got.IsError {
		t.Fatalf("approve__order #1250: %s", text(got))
	}
	if txt := text(got); !strings.Contains(txt, "#1250 is ord_250") || !strings.Contains(txt, "brought into view with open@order") ||
		!strings.Contains(txt, "orders.pending decrease met") {
		t.Errorf("approve__order text:\n%s", txt)
	}
	sc := jsontrees.RoundTrip(t, got.StructuredContent).(map[string]any)
	if diff := cmp.Diff("ord_250", sc["evidence"].(map[string]any)["record"]); diff != "" {
		t.Errorf("evidence record (-want +got):\n%s", diff)
	}

	none := call(t, s, "approve__order", map[string]any{"record": "#99999"})
	// A label no record has goes to the page, the authority on what
	// exists; the result says what ids and labels look like.
	if !none.IsError || !strings.HasPrefix(text(none), "ACTION_NOT_FOUND: ") || !strings.Contains(text(none), " Next: ") ||
		!strings.Contains(text(none), `No order has the id or label "#99999". Next: pass the id or the whole label of a order listed by browser.page, e.g. "ord_`) ||
		strings.Contains(text(none), "describe again") {
		t.Errorf("unknown label: %s", text(none))
	}
}

// Tabs: a tab the page opens is listed by browser.page, and opening it
// (browser.open {tab}) makes the page's tools follow it.
func TestSwitchTab(t *testing.T) {
	s, p, _ := demoSessionPage(t, "/shop/")
	waitTools(t, s, "cart_add", true)
	if _, err := chromedp.Run(p.Context(), chromedp.Evaluate[bool](`!!window.open("/orders/", "_blank")`)); err != nil {
		t.Fatal(err)
	}
	var other string
	for deadline := time.Now().Add(20 * time.Second); other == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		res := call(t, s, "browser.page", nil)
		tabs, _ := res.StructuredContent.(map[string]any)["tabs"].([]any)
		if len(tabs) > 0 && !strings.Contains(text(res), "\nTabs (browser.open a tab):\n") {
			t.Errorf("browser.page's text does not list the tabs: %s", text(res))
		}
		for _, tab := range tabs {
			m := tab.(map[string]any)
			if strings.Contains(m["url"].(string), "/orders/") {
				other = m["id"].(string)
			}
		}
	}
	if other == "" {
		t.Fatal("browser.page never listed the tab the page opened")
	}
	sw := call(t, s, "browser.open", map[string]any{"tab": other})
	if sw.IsError || !strings.Contains(text(sw), "Orders") {
		t.Fatalf("browser.open a tab: %s", text(sw))
	}
	names := waitTools(t, s, "approve__order", true)
	if strings.Contains(strings.Join(names, " "), "cart_add") {
		t.Errorf("the shop's tools stayed after the switch: %v", names)
	}
	if got := call(t, s, "open__order", map[string]any{"record": "#1003"}); got.IsError {
		t.Errorf("open__order in the new tab: %s", text(got))
	}
	bad := call(t, s, "browser.open", map[string]any{"tab": "nope"})
	if !bad.IsError || !strings.HasPrefix(text(bad), "NO_SUCH_TAB: ") {
		t.Errorf("switch to no tab: %s", text(bad))
	}
}

// pagesSession serves pages (path → HTML, beside the built module at
// /pling/) and starts a browsing session on start, bridged as pling mcp
// bridges it. It skips as demoSession does.
func pagesSession(t *testing.T, pages map[string]string, start string) (*session, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	d, _ := filepath.Abs("../../dist")
	if env := os.Getenv("PLING_DIST"); env != "" {
		d = env
	}
	if _, err := os.Stat(filepath.Join(d, "pling.wasm")); err != nil {
		t.Skip("pling.wasm is not built; run make wasm")
	}
	require.Chromium(t)
	mux := http.NewServeMux()
	mux.Handle("/pling/", http.StripPrefix("/pling/", http.FileServer(http.Dir(d))))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := cdp.Start(ctx, hs.URL+start, cdp.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return connect(t, plingmcp.NewBridge(agent.New(p), plingmcp.WithBrowser(p, hs.URL))), hs.URL
}

const landmarksPage = `<!doctype html><title>Board</title>
<script src="/pling/pling.js" data-expose="*"></script>
<header><strong>Acme</strong><nav aria-label="Main"><a href="/tickets/">Tickets</a> <a href="/admin/">Settings</a></nav></header>
<form role="search" aria-label="Tickets"><input name="q"></form>
<main><article><header>Not a landmark</header><p>Hi</p></article>
<section>No name, no landmark</section><section aria-labelledby="h">
<h2 id="h">Recent activity</h2></section></main>
<aside aria-label="Filters">…</aside><div hidden><nav aria-label="Hidden">x</nav></div>
<footer><a href="/help/">Help</a></footer>
<script>pling.action({ id: "board.add", title: "Add", run: () => 1 });</script>`

// browser.page lists the page's landmarks (its navigation, main
// part, search…, with their names) beside its links, on a page that
// speaks Pling; a page without Pling has them in its outline.
func TestBrowserPageLandmarks(t *testing.T) {
	s, _ := pagesSession(t, map[string]string{
		"/board/": landmarksPage,
		"/plain/": strings.Replace(landmarksPage, `<script src="/pling/pling.js" data-expose="*"></script>`, "", 1),
	}, "/board/")
	waitTools(t, s, "board_add", true)
	got := text(call(t, s, "browser.page", nil))
	want := `Landmarks: header, navigation "Main", search "Tickets", main, region "Recent activity", aside "Filters", footer`
	if !strings.Contains(got, want) || !strings.Contains(got, `Links: "Tickets" -> "/tickets/"`) {
		t.Errorf("browser.page lacks %q (or the links):\n%s", want, got)
	}
	plain := text(call(t, s, "browser.open", map[string]any{"url": "/plain/"}))
	if !strings.Contains(plain, "does not speak Pling") || !strings.Contains(plain, "landmark: navigation \"Main\"\n") {
		t.Errorf("the outline of a page without Pling lacks its landmarks:\n%s", plain)
	}
}

// browser.page says when the page threw (message and place, no
// stack), from what the browser saw since the page loaded; a page that
// did not throw says nothing of it.
func TestBrowserPageSaysThePageThrew(t *testing.T) {
	s, base := pagesSession(t, map[string]string{
		"/throws/": `<!doctype html><title>Throws</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>pling.action({ id: "board.add", run: () => 1 }); boardz.render();</script>`,
		"/clean/": landmarksPage,
	}, "/throws/")
	waitTools(t, s, "board_add", true)
	res := call(t, s, "browser.page", nil)
	want := `The page threw 1 error(s): "ReferenceError: boardz is not defined (at ` + base + `/throws/:3)". Some of its tools may be missing or broken.`
	if got := text(res); !strings.Contains(got, want) || strings.Contains(got, "    at ") {
		t.Errorf("browser.page lacks %q (or has a stack):\n%s", want, got)
	}
	if sc, _ := jsontrees.RoundTrip(t, res.StructuredContent).(map[string]any); sc["threw"] != float64(1) {
		t.Errorf("structuredContent.threw = %v, want 1", sc["threw"])
	}
	if got := text(call(t, s, "browser.open", map[string]any{"url": "/clean/"})); strings.Contains(got, "threw") {
		t.Errorf("a page that did not throw: %s", got)
	}
}

// browser.page says on how many rows in view a row action with
// an availability check can run, and the count follows the page: the
// help desk's close@ticket on one open ticket, then on the same ticket
// closed (the tool stays listed: other rows may be open).
func TestBrowserPageRowsAvailable(t *testing.T) {
	s, _ := helpdeskSession(t, "/tickets/")
	waitTools(t, s, "close__ticket", true)
	rows := regexp.MustCompile(`\nRow tools: close__ticket available for (\d+) of the (\d+) rows in view\n`)
	m := rows.FindStringSubmatch(text(call(t, s, "browser.page", nil)))
	if m == nil || m[2] != "25" || m[1] == "0" || m[1] == "25" {
		t.Fatalf("browser.page on the ticket list: %q, want close__ticket available for some of the 25 rows in view", m)
	}
	if r := call(t, s, "tickets_search", map[string]any{"query": "T-1042"}); r.IsError {
		t.Fatalf("search: %s", text(r))
	}
	for _, want := range []string{"1 of the 1", "0 of the 1"} {
		got := text(call(t, s, "browser.page", nil))
		if !strings.Contains(got, "Row tools: close__ticket available for "+want+" rows in view") || strings.Contains(got, "open__ticket available") {
			t.Errorf("browser.page: want close__ticket available for %s rows in view (and no count for open__ticket, which has no check):\n%s", want, got)
		}
		if want == "1 of the 1" {
			if r := call(t, s, "close__ticket", map[string]any{"record": "T-1042"}); r.IsError {
				t.Fatalf("close: %s", text(r))
			}
		}
	}
}

// browser.open lists links and landmarks once: a page with the same
// ones as the last look says so in one line, a page with other ones
// lists them, and browser.page (the whole view) lists them always.
func TestBrowserOpenSaysNavOnce(t *testing.T) {
	other := strings.Replace(landmarksPage, `<a href="/help/">Help</a>`, `<a href="/faq/">FAQ</a>`, 1)
	s, _ := pagesSession(t, map[string]string{"/board/": landmarksPage, "/board2/": landmarksPage, "/other/": other}, "/board/")
	waitTools(t, s, "board_add", true)
	const links, same = `Links: "Tickets" -> "/tickets/"`, "Links and landmarks: as before"
	for _, step := range []struct {
		tool, url string
		want      string
		listed    bool
	}{
		{"browser.page", "", links, true},
		{"browser.open", "/board2/", same, false},
		{"browser.page", "", links, true},
		{"browser.open", "/other/", `"FAQ" -> "/faq/"`, true},
		{"browser.open", "/board/", `"Help" -> "/help/"`, true},
		{"browser.open", "/board2/", same, false},
	} {
		var args map[string]any
		if step.url != "" {
			args = map[string]any{"url": step.url}
		}
		got := text(call(t, s, step.tool, args))
		if !strings.Contains(got, step.want) || strings.Contains(got, "Landmarks: ") != step.listed {
			t.Errorf("%s %s: want %q, landmarks listed %v:\n%s", step.tool, step.url, step.want, step.listed, got)
		}
	}
}
