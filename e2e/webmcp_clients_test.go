package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pling-go/pling/internal/testing/mcptest"
)

// The generic browser tools from npm that consume a page's WebMCP tools,
// pinned to the versions docs/page-api.md names.
const (
	chromeDevToolsMCPVersion = "1.11.0"
	playwrightMCPVersion     = "0.0.86"
)

// webmcpConsumer is a consumer from npm of a page's WebMCP tools,
// attached to the test's browser: an MCP server that offers them to its
// model, as a scripted agent drives it over stdio with the official Go
// SDK's client (cs), or Stagehand's SDK as its user calls it (cs nil).
type webmcpConsumer struct {
	cs *sdk.ClientSession
	// open loads url in the browser, the way the consumer's model would.
	open func(ctx context.Context, url string) error
	// tools lists the page's WebMCP tools the consumer offers its model,
	// by the names the page registered (without the consumer's prefix),
	// with the hints the model is shown.
	tools func(ctx context.Context) (map[string]toolHints, error)
	// call calls one of them and returns the text the model reads; err
	// is non-nil when the consumer reports the call as failed, in its
	// own terms (webmcpFailed).
	call func(ctx context.Context, tool string, args map[string]any) (string, error)
}

// openFor opens url in the consumer (named kind) and waits until it
// offers the page's tool.
func (mc *webmcpConsumer) openFor(t *testing.T, ctx context.Context, kind, url, tool string) {
	t.Helper()
	if err := mc.open(ctx, url); err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(100 * time.Millisecond) {
		tools, err := mc.tools(ctx)
		if err != nil {
			t.Fatalf("listing the page's tools: %v", err)
		}
		if _, ok := tools[tool]; ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page's tools as %s offers them: %v", kind, tools)
		}
	}
}

// webmcpConsumers are the consumers the WebMCP tests drive, each started
// attached to the test's browser.
var webmcpConsumers = []webmcpConsumerKind{
	{"chrome-devtools-mcp", startChromeDevToolsMCP, nil, false},
	{"playwright-mcp", startPlaywrightMCP, nil, false},
	stagehandConsumer,
}

// eachWebMCPConsumer runs test as a subtest for each consumer, with the
// built module's directory; it installs the consumers from npm and drives
// Chromium, which -short leaves out.
func eachWebMCPConsumer(t *testing.T, test func(t *testing.T, d string, c webmcpConsumerKind)) {
	t.Helper()
	if testing.Short() {
		t.Skip("installs WebMCP consumers from npm and drives Chromium: not in -short mode")
	}
	d := dist(t)
	for _, c := range webmcpConsumers {
		t.Run(c.name, func(t *testing.T) { test(t, d, c) })
	}
}

// webmcpConsumerKind is a consumer by name, how to start one, and the
// browser flags it needs beside the test's.
type webmcpConsumerKind struct {
	name  string
	start func(t *testing.T, ctx context.Context, browser string) *webmcpConsumer
	flags []chromedp.ExecAllocatorOption
	// noConsequential: the consumer keeps no consequential hint of the
	// browser's (Stagehand's annotations are readOnly, untrustedContent
	// and autosubmit).
	noConsequential bool
}

// onSite starts a Chromium with the native WebMCP API on, on the demo
// site of the module in d (and extra's pages), and the consumer attached
// to it by the browser's debugging address, as docs/page-api.md §5 shows.
// ctx ends after 3 minutes or with the test.
func (c webmcpConsumerKind) onSite(t *testing.T, d string, extra *http.ServeMux) (*browserSite, context.Context, *webmcpConsumer) {
	t.Helper()
	site := startBrowserSite(t, d, extra, append([]chromedp.ExecAllocatorOption{chromedp.Flag("enable-experimental-web-platform-features", true)}, c.flags...)...)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	ws, err := url.Parse(site.remote)
	if err != nil {
		t.Fatal(err)
	}
	return site, ctx, c.start(t, ctx, "http://"+ws.Host)
}

// toolHints are the annotations a consumer shows its model for a tool.
type toolHints struct{ ReadOnly, Consequential bool }

// TestWebMCPClients drives the demo's orders page through the WebMCP
// consumers from npm, Chrome DevTools MCP (--categoryExperimentalWebmcp),
// Playwright MCP (its webmcp_<tool> tools) and Stagehand's SDK
// (page.tools, tool.invoke, invocation.result), each attached to a
// Chromium the test started with the native WebMCP API on: a row action
// by the label a person reads (approve@order on "#1005"), then a refund
// that needs a person's approval, which the test gives as that person
// with trusted input on the dialog. The page's own state, read over
// DevTools, proves both ran. A call on a record the page does not have
// reaches each consumer as a failed call (webmcpFailed) whose text the
// model reads, code first; the two that ran as calls that ran.
func TestWebMCPClients(t *testing.T) {
	eachWebMCPConsumer(t, func(t *testing.T, d string, c webmcpConsumerKind) {
		site, ctx, mc := c.onSite(t, d, nil)
		if err := mc.open(ctx, site.url+"/orders/"); err != nil {
			t.Fatalf("opening the orders page: %v", err)
		}
		// The consumer's view of the page's tools, as its model sees it,
		// on its first look right after the navigation: the orders
		// page's declarations are all ones the mirror registers before
		// the page's load event, without waiting for the module (on
		// this development origin the module then starts
		// at load to list the page's mistakes, TestWebMCPLazy serves a
		// public name where it does not).
		// What the model is told about each: the refund that needs a
		// person is consequential, opening an order is a read.
		want := map[string]toolHints{
			"approve__order": {},
			"refund__order":  {Consequential: true},
			"open__order":    {ReadOnly: true},
			"orders_filter":  {ReadOnly: true},
		}
		if c.noConsequential {
			want["refund__order"] = toolHints{}
		}
		tools, err := mc.tools(ctx)
		if err != nil {
			t.Fatalf("listing the page's WebMCP tools: %v", err)
		}
		if diff := cmp.Diff(want, tools); diff != "" {
			t.Fatalf("the page's tools as %s offers them on its first look after the navigation (-want +got):\n%s", c.name, diff)
		}

		person := site.attachTab(t, "/orders/")
		status := func(id string) string {
			return eval[string](person, `document.querySelector('#rows .row[data-order="`+id+`"] .pill').textContent`)
		}

		// 1. A row action by the label the person reads: "#1005", the
		// first word of "#1005 · Ines Chen · pending · €…".
		order := visibleOrders(t, person, 1, "pending")[0]
		label := strings.Fields(order.Label)[0]
		out, err := mc.call(ctx, "approve__order", map[string]any{"record": label})
		t.Logf("approve__order %s: %q", label, out)
		if err != nil || !strings.Contains(out, "OK: approve@order on "+order.ID+" ran.") {
			t.Errorf("approve__order by label %s answered %q, %v; want it to say approve@order ran on %s", label, out, err, order.ID)
		}
		if got := status(order.ID); got != "approved" {
			t.Errorf("order %s (%s) is %q after the call, want approved", order.ID, label, got)
		}

		// A record the page does not have: a failed call, in each
		// consumer's own terms, with Pling's text for the model.
		out, err = mc.call(ctx, "approve__order", map[string]any{"record": "#9999"})
		t.Logf("approve__order #9999: %q, %v", out, err)
		if err == nil || !strings.Contains(out, "ACTION_NOT_FOUND: No such record") {
			t.Errorf("approve__order on #9999 answered %q, %v; want ACTION_NOT_FOUND, reported as a failed call", out, err)
		}

		// 2. A refund a person must approve: the call waits until the
		// person clicks Approve in the page's dialog.
		var refund namedOrder
		for _, o := range refundable(t, person, 2) {
			if o.ID != order.ID {
				refund = namedOrder{o.ID, strings.Fields(o.Label)[0]}
				break
			}
		}
		done := make(chan callOutcome, 1)
		go func() {
			out, err := mc.call(ctx, "refund__order", map[string]any{"record": refund.label, "reason": "damaged"})
			done <- callOutcome{out, err}
		}()
		shown := person.personAnswers("approve")
		if !strings.Contains(shown, refund.label) {
			t.Errorf("the approval dialog did not name the order %s: %q", refund.label, shown)
		}
		var res callOutcome
		select {
		case res = <-done:
		case <-ctx.Done():
			t.Fatalf("refund__order never answered after the person approved: %v", ctx.Err())
		}
		t.Logf("refund__order %s: %q", refund.label, res.text)
		if res.err != nil || !strings.Contains(res.text, "OK: refund@order on "+refund.id+" ran.") {
			t.Errorf("refund__order %s answered %q, %v; want it to say refund@order ran on %s", refund.label, res.text, res.err, refund.id)
		}
		if got := status(refund.id); got != "refunded" {
			t.Errorf("order %s (%s) is %q after the approved refund, want refunded", refund.id, refund.label, got)
		}
	})
}

// namedOrder is an order as the test names it: its id and the label word a
// person reads.
type namedOrder struct{ id, label string }

// callOutcome is what a tool call answered.
type callOutcome struct {
	text string
	err  error
}

// startMCPServer runs argv (node and its script) as an MCP server over
// stdio, in a scratch working directory, and connects the official Go
// SDK's client to it.
func startMCPServer(t *testing.T, ctx context.Context, env []string, argv ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	c := sdk.NewClient(&sdk.Implementation{Name: "pling-e2e-webmcp", Version: "0"}, nil)
	cs, _ := mcptest.Child(t, ctx, filepath.Base(argv[1]), c, cmd, nil)
	return cs
}

// callText calls an MCP tool and returns its text content; a result
// marked isError is an error with that text.
func callText(ctx context.Context, cs *sdk.ClientSession, name string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	text := strings.Join(parts, "\n")
	if res.IsError {
		return text, fmt.Errorf("%s answered an error: %s", name, text)
	}
	return text, nil
}

// startChromeDevToolsMCP runs Chrome DevTools MCP attached to the browser
// at its debugging address (http://host:port), with its WebMCP tools on. It offers a page's
// tools through list_webmcp_tools and execute_webmcp_tool, on the page it
// names by id.
func startChromeDevToolsMCP(t *testing.T, ctx context.Context, browser string) *webmcpConsumer {
	node, dir := npmPackage(t, "chrome-devtools-mcp", chromeDevToolsMCPVersion)
	cs := startMCPServer(t, ctx, []string{"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS=1"},
		node, filepath.Join(dir, "node_modules", "chrome-devtools-mcp", "build", "src", "bin", "chrome-devtools-mcp.js"),
		"--browserUrl", browser, "--categoryExperimentalWebmcp", "--no-usage-statistics", "--no-performance-crux")
	page := 0
	c := &webmcpConsumer{cs: cs}
	c.open = func(ctx context.Context, url string) error {
		out, err := callText(ctx, cs, "new_page", map[string]any{"url": url})
		if err != nil {
			return err
		}
		// The answer lists the pages, "N: TITLE (URL)", the new one
		// selected.
		if m := regexp.MustCompile(`(?m)^(\d+): .*\(` + regexp.QuoteMeta(url) + `\)`).FindStringSubmatch(out); m != nil {
			page, _ = strconv.Atoi(m[1])
		}
		if page == 0 {
			return fmt.Errorf("new_page did not list %s: %q", url, out)
		}
		return nil
	}
	c.tools = func(ctx context.Context) (map[string]toolHints, error) {
		out, err := callText(ctx, cs, "list_webmcp_tools", map[string]any{"pageId": page})
		if err != nil {
			return nil, err
		}
		// One line a tool: name="…", description="…", inputSchema={…},
		// annotations={"readOnly":…,"consequential":…}.
		tools := map[string]toolHints{}
		for _, m := range regexp.MustCompile(`(?m)^name="([^"]+)".*, annotations=(\{.*\})$`).FindAllStringSubmatch(out, -1) {
			var h toolHints
			if err := json.Unmarshal([]byte(m[2]), &h); err != nil {
				return nil, fmt.Errorf("list_webmcp_tools: %s: %w", m[0], err)
			}
			tools[m[1]] = h
		}
		return tools, nil
	}
	c.call = func(ctx context.Context, tool string, args map[string]any) (string, error) {
		in, _ := json.Marshal(args)
		out, err := callText(ctx, cs, "execute_webmcp_tool", map[string]any{"pageId": page, "toolName": tool, "input": string(in)})
		if err != nil {
			return out, err
		}
		// The answer is the browser's, as JSON: {status, output, error}.
		var res struct {
			Status string
			Output json.RawMessage
			Error  string
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			return out, fmt.Errorf("execute_webmcp_tool answered %q: %w", out, err)
		}
		return out, webmcpFailed(tool, res.Status, res.Output, res.Error)
	}
	return c
}

// webmcpFailed is the error a consumer that hands on the browser's own
// answer (Chrome DevTools MCP, Stagehand) shows its model or program for
// a call: its status when not Completed (the page's execute threw), or an
// output that is MCP's tool error ({content, isError: true}, what the
// mirror answers on native WebMCP for a call that failed); nil for a call
// that ran.
func webmcpFailed(tool, status string, output json.RawMessage, errText string) error {
	if status != "Completed" {
		return fmt.Errorf("%s: %s: %s", tool, status, errText)
	}
	var o struct{ IsError bool }
	if json.Unmarshal(output, &o) == nil && o.IsError {
		return fmt.Errorf("%s: its output is a tool error: %s", tool, output)
	}
	return nil
}

// startPlaywrightMCP runs Playwright MCP attached to the browser at its
// debugging address (http://host:port, --cdp-endpoint; WebMCP is on by default). It
// collects a page's WebMCP tools with each snapshot and offers them as
// tools of its own, webmcp_<tool>.
func startPlaywrightMCP(t *testing.T, ctx context.Context, browser string) *webmcpConsumer {
	node, dir := npmPackage(t, "@playwright/mcp", playwrightMCPVersion)
	cs := startMCPServer(t, ctx, []string{"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "PLAYWRIGHT_BROWSERS_PATH=" + filepath.Join(t.TempDir(), "no-browsers")},
		node, filepath.Join(dir, "node_modules", "@playwright", "mcp", "cli.js"),
		"--cdp-endpoint", browser, "--output-dir", t.TempDir())
	c := &webmcpConsumer{cs: cs}
	c.open = func(ctx context.Context, url string) error {
		_, err := callText(ctx, cs, "browser_navigate", map[string]any{"url": url})
		return err
	}
	c.tools = func(ctx context.Context) (map[string]toolHints, error) {
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{})
		if err != nil {
			return nil, err
		}
		// The model reads readOnlyHint, and [CONSEQUENTIAL: …] in the
		// description.
		tools := map[string]toolHints{}
		for _, tool := range res.Tools {
			if n, ok := strings.CutPrefix(tool.Name, "webmcp_"); ok {
				tools[n] = toolHints{ReadOnly: tool.Annotations != nil && tool.Annotations.ReadOnlyHint,
					Consequential: strings.Contains(tool.Description, "[CONSEQUENTIAL")}
			}
		}
		if len(tools) == 0 {
			// Playwright collects the page's tools when it takes a
			// snapshot: take one, as its model would, for the next look.
			if _, err := callText(ctx, cs, "browser_snapshot", map[string]any{}); err != nil {
				return nil, err
			}
		}
		return tools, nil
	}
	c.call = func(ctx context.Context, tool string, args map[string]any) (string, error) {
		return callText(ctx, cs, "webmcp_"+tool, args)
	}
	return c
}

// TestWebMCPClientsFormRefused calls a WebMCP declarative form (clubPage,
// which a person filled in) through each consumer from npm, with values
// the browser's own constraints refuse and with values the page's submit
// handler refuses (naming the field with setCustomValidity, then
// rejecting respondWith, at once or after its own check): the model reads
// INVALID_PARAMS at the field's path with the browser's or the page's
// message, with a next step that points to that message (never "Observe
// the page", nor the schema the values matched), the consumer reports the
// call as failed (webmcpFailed), and the form keeps the person's values. TestWebMCPDeclarativeFormPageRefused shows the same through the
// native API.
func TestWebMCPClientsFormRefused(t *testing.T) {
	eachWebMCPConsumer(t, func(t *testing.T, d string, c webmcpConsumerKind) {
		extra := http.NewServeMux()
		extra.HandleFunc("/test/webmcp-club.html", staticPage(clubPage))
		site, ctx, mc := c.onSite(t, d, extra)
		mc.openFor(t, ctx, c.name, site.url+"/test/webmcp-club.html", "join_club")
		person := site.attachTab(t, "/test/webmcp-club.html")
		const form = `JSON.stringify([document.forms[0].email.value, document.forms[0].who.value, document.forms[0].checkValidity()])`
		for _, r := range []struct {
			name       string
			args       map[string]any
			path, says string
		}{
			{"the browser refuses", map[string]any{"email": "not an address", "who": "Bo"}, "/email", "the page says"},
			{"the page names the field at once", map[string]any{"email": "bo@taken.example", "who": "Bo"}, "/email", "That address is taken"},
			{"the page names the field after a check", map[string]any{"email": "bo@later.example", "who": "Bo"}, "/email", "That address cannot join yet"},
		} {
			t.Run(r.name, func(t *testing.T) {
				out, err := mc.call(ctx, "join_club", r.args)
				t.Logf("join_club: %q, %v", out, err)
				// Each consumer quotes the page's answer as a JSON string
				// (in its own JSON, for Chrome DevTools MCP): the model
				// reads it with its escapes, taken off here.
				read := strings.ReplaceAll(out, `\`, "")
				if !strings.Contains(read, "INVALID_PARAMS: ") || !strings.Contains(read, `"path":"`+r.path+`"`) || !strings.Contains(read, r.says) ||
					strings.Contains(read, "Observe the page") || strings.Contains(read, "against the schema") {
					t.Errorf("%s answered %q, %v; want INVALID_PARAMS at %q saying %q, sending the model neither to observe the page nor to the schema its values matched", c.name, out, err, r.path, r.says)
				}
				if err == nil {
					t.Errorf("%s reported the refused call as one that ran: %q", c.name, out)
				}
				if diff := cmp.Diff(`["ana@example.com","Ana",true]`, eval[string](person.on(t), form)); diff != "" {
					t.Errorf("the form after the refused call, [email, who, valid] (-the person's +got):\n%s", diff)
				}
			})
		}
	})
}
