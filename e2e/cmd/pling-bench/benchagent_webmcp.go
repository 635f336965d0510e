package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	cdptarget "github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pling-go/pling/internal/testing/pgtest"
)

// The WebMCP side of the agent benchmark: @playwright/mcp with WebMCP on,
// on the same pages, reading the same Pling declarations through the
// page's mirror (js-shim/webmcp.js). Playwright collects a page's WebMCP
// tools with each snapshot (every navigation and click takes one) and
// offers them to the agent as webmcp_<tool>, with
// notifications/tools/list_changed when they change.

// playwrightFeatures are the features @playwright/mcp's Chromium launch
// enables itself (chromiumSwitches' --enable-features in playwright-core
// 1.66). Chromium keeps only the last --enable-features switch, so the
// bench's own switch repeats them with WebMCP added; Playwright in turn
// refuses its WebMCP tools unless WebMCP is among the launch arguments'
// features.
var playwrightFeatures = []string{"CDPScreenshotNewSurface", "SkipListAccountsWithoutGaiaCookies"}

// webmcpLaunchArgs are the launch arguments the WebMCP side adds: the
// feature, and a DevTools port for the person (the bank's window on
// checkout), who acts in the browser as on the Pling side, not through
// the agent's server.
func webmcpLaunchArgs(port int) []string {
	return []string{"--enable-features=" + strings.Join(append(playwrightFeatures[:len(playwrightFeatures):len(playwrightFeatures)], "WebMCP"), ","),
		"--remote-debugging-port=" + strconv.Itoa(port)}
}

// webmcpPrefix is how @playwright/mcp names a page's WebMCP tool.
const webmcpPrefix = "webmcp_"

// webmcpAgent is a model's way with Playwright when the page declares
// tools: navigate, read the webmcp_ tools the server lists, call them; a
// look or a click only where the task has no tool or the tool is not
// there yet.
type webmcpAgent struct {
	*pwAgent
	person   func(ctx context.Context, path string) <-chan error
	waits    int      // looks taken because a tool was not listed yet
	fallback []string // what the agent clicked for want of a tool
	labels   bool     // records were named by their labels
	outside  bool     // a record id came from outside MCP
}

// maxToolWaits bounds the looks the agent takes for a tool the page
// should declare before it falls back to the page's buttons.
const maxToolWaits = 3

// tool is the webmcp_ tool for the page's tool name, listing the tools
// again when the server said they changed. When the page has not
// registered it yet (the mirror registers as the page's script runs, and
// Playwright collects the tools with a snapshot), the agent waits a
// moment through browser_wait_for (its snapshot collects them again),
// counted, up to maxToolWaits times; nil then.
func (a *webmcpAgent) tool(ctx context.Context, name string) (*sdk.Tool, error) {
	for try := 0; ; try++ {
		if a.s.changed.Swap(false) {
			if err := a.s.listTools(ctx); err != nil {
				return nil, err
			}
		}
		if t := a.s.tools[webmcpPrefix+name]; t != nil {
			return t, nil
		}
		if try == maxToolWaits {
			return nil, nil
		}
		a.waits++
		r, err := a.s.call(ctx, "browser_wait_for", map[string]any{"time": 1})
		if err != nil {
			return nil, err
		}
		if r.IsError {
			return nil, fmt.Errorf("browser_wait_for: %.1200s", r.Text)
		}
		// The notification may trail the answer by a moment.
		for i := 0; i < 10 && !a.s.changed.Load(); i++ {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// webmcpOK matches the first line of a mirrored tool's answer as
// Playwright prints it (the page's text as a JSON string).
var webmcpOK = regexp.MustCompile(`(?m)^"OK: `)

// webmcpDone says whether the mirror's answer, as Playwright prints it,
// reports the call done with every expectation met, in either of the
// mirror's formats: its text for a model ("OK: …", "… NOT met"), or,
// from a mirror without that text, the whole Surface envelope as the text
// ({"ok":true,…,"met":true}, escaped inside Playwright's JSON).
func webmcpDone(text string) bool {
	if webmcpOK.MatchString(text) {
		return !strings.Contains(text, "NOT met")
	}
	flat := strings.ReplaceAll(text, `\"`, `"`)
	return strings.Contains(flat, `"ok":true`) && !strings.Contains(flat, `"met":false`) && !strings.Contains(flat, `"error":`) &&
		!strings.Contains(flat, `"isError": true`)
}

// call calls the page's tool through Playwright and verifies its answer
// (webmcpDone).
func (a *webmcpAgent) call(ctx context.Context, name string, args map[string]any) (string, error) {
	t, err := a.tool(ctx, name)
	if err != nil {
		return "", err
	}
	if t == nil {
		return "", noTool{name}
	}
	r, err := a.s.call(ctx, t.Name, args)
	if err != nil {
		return "", err
	}
	if r.IsError || !webmcpDone(r.Text) {
		return "", fmt.Errorf("%s: %.1200s", t.Name, r.Text)
	}
	return r.Text, nil
}

// record is what the agent passes as a row tool's record for the row a
// person calls label: the label when the mirrored schema says it takes
// one, else the demo's id for it, known outside MCP (and reported).
func (a *webmcpAgent) record(t *sdk.Tool, label string) string {
	if strings.Contains(strings.ToLower(paramDescription(t, "record")), "label") {
		a.labels = true
		return label
	}
	a.outside = true
	if n, err := strconv.Atoi(strings.TrimPrefix(label, "#")); err == nil {
		return fmt.Sprintf("ord_%d", n-1000)
	}
	return strings.ToLower(strings.ReplaceAll(label, "-", "")) // T-1042 → t1042
}

// paramDescription is the description of a tool's parameter.
func paramDescription(t *sdk.Tool, param string) string {
	var in struct {
		Properties map[string]struct{ Description, Title string }
	}
	b, _ := json.Marshal(t.InputSchema)
	_ = json.Unmarshal(b, &in)
	p := in.Properties[param]
	return strings.TrimSpace(p.Title + " " + p.Description)
}

// requiredParams are a tool's required parameters, in schema order.
func requiredParams(t *sdk.Tool) []string {
	var in struct{ Required []string }
	b, _ := json.Marshal(t.InputSchema)
	_ = json.Unmarshal(b, &in)
	return in.Required
}

// fieldLine matches a form field in a Playwright snapshot with its value:
// `- spinbutton "Answer within (hours)" [ref=e12]: "24"`.
var fieldLine = regexp.MustCompile(`^\s*-\s+(?:textbox|spinbutton|combobox|searchbox) "((?:[^"\\]|\\.)*)"(?: \[[^\]]*\])*: (.*)$`)

// fieldValues reads the named fields' values from a snapshot, by their
// accessible names, as an agent that must send every required field reads
// the current ones first. A quoted YAML value is unquoted; a number-like
// value stays text.
func fieldValues(snapshot string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(snapshot, "\n") {
		m := fieldLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[2])
		if u, err := strconv.Unquote(v); err == nil && strings.HasPrefix(v, `"`) {
			v = u
		}
		out[unquoteYAML(m[1])] = v
	}
	return out
}

// fillRequired completes args with the current values of the tool's
// other required parameters, read from a snapshot: the field whose name
// the parameter's description (or, failing that, the parameter's name)
// starts with. Numbers go as numbers where the schema says so.
func fillRequired(t *sdk.Tool, args map[string]any, snapshot string) error {
	fields := fieldValues(snapshot)
	var in struct {
		Properties map[string]struct{ Type, Description, Title string }
	}
	b, _ := json.Marshal(t.InputSchema)
	_ = json.Unmarshal(b, &in)
	for _, p := range requiredParams(t) {
		if _, ok := args[p]; ok {
			continue
		}
		prop := in.Properties[p]
		found := false
		for label, v := range fields {
			for _, hint := range []string{prop.Title, prop.Description, p} {
				if hint == "" || !strings.HasPrefix(strings.ToLower(hint), strings.ToLower(label)) && !strings.EqualFold(hint, label) {
					continue
				}
				args[p], found = v, true
				if prop.Type == "number" || prop.Type == "integer" {
					n, err := strconv.ParseFloat(v, 64)
					if err != nil {
						return fmt.Errorf("%s: %q is not a number", p, v)
					}
					args[p] = n
				}
				break
			}
			if found {
				break
			}
		}
		if !found {
			return fmt.Errorf("no field on the page for the required %s (fields %v)", p, toolNames(fields))
		}
	}
	return nil
}

// runPWWebMCP spawns @playwright/mcp with WebMCP on and runs the task's
// WebMCP script.
func (r *agentRig) runPWWebMCP(ctx context.Context, t agentTask) (agentRun, error) {
	var run agentRun
	port, err := pgtest.FreePort()
	if err != nil {
		return run, err
	}
	cfgFile := filepath.Join(r.tmp, "playwright-webmcp.json")
	if err := os.WriteFile(cfgFile, playwrightConfig(r.chromium, webmcpLaunchArgs(port)...), 0o644); err != nil {
		return run, err
	}
	start := time.Now()
	s, stderr, err := r.spawnPW(ctx, &run.meter, "--config", cfgFile)
	if err != nil {
		return run, err
	}
	defer s.close()
	a := &webmcpAgent{pwAgent: &pwAgent{s: s, base: r.siteOf(t)},
		person: func(ctx context.Context, path string) <-chan error {
			return personAtHandoff(ctx, devToolsTab(ctx, port), path)
		}}
	res, err := t.webmcp(ctx, a)
	if nt := (noTool{}); errors.As(err, &nt) {
		// No such tool on the page: the agent does it by hand, from the
		// start, on the find path (the cheaper of Playwright's two).
		a.fallback = append(a.fallback, nt.name)
		a.find = s.tools["browser_find"] != nil
		res, err = t.pw(ctx, a.pwAgent)
	}
	run.elapsed, run.result = time.Since(start), res
	run.note = webmcpNote(a)
	if err != nil {
		err = fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return run, err
}

// webmcpNote says how the WebMCP side got there: by the page's tools
// alone, or with looks and clicks.
func webmcpNote(a *webmcpAgent) string {
	var parts []string
	if len(a.fallback) == 0 {
		parts = append(parts, "page tools only")
	} else {
		parts = append(parts, "clicked for want of a tool: "+strings.Join(a.fallback, ", "))
	}
	if a.waits > 0 {
		parts = append(parts, fmt.Sprintf("%d look(s) waiting for the page's tools", a.waits))
	}
	if a.labels {
		parts = append(parts, "records by label")
	}
	if a.outside {
		parts = append(parts, "record id from the label outside MCP")
	}
	return strings.Join(parts, "; ")
}

// devToolsTab finds the page on path in the browser listening on port
// (its /json/list), and attaches to it alone: no tab of the person's own
// is opened beside Playwright's.
func devToolsTab(ctx context.Context, port int) func(path string) (context.Context, bool) {
	return func(path string) (context.Context, bool) {
		var list []struct{ ID, Type, URL string }
		if devToolsJSON(ctx, port, "list", &list) != nil {
			return nil, false
		}
		for _, in := range list {
			if in.Type != "page" || !strings.Contains(in.URL, path) {
				continue
			}
			var v struct{ WebSocketDebuggerURL string }
			if devToolsJSON(ctx, port, "version", &v) != nil || v.WebSocketDebuggerURL == "" {
				return nil, false
			}
			alloc, _ := remote.NewAllocator(ctx, v.WebSocketDebuggerURL, remote.NoModifyURL)
			tab, _ := chromedp.NewContext(alloc, chromedp.WithTargetID(cdptarget.ID(in.ID)), chromedp.WithDetachOnCancel())
			return tab, true
		}
		return nil, false
	}
}

// devToolsJSON reads the browser's /json/<what> on port into v.
func devToolsJSON(ctx context.Context, port int, what string, v any) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/json/%s", port, what), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// noTool is a task's tool the page did not offer, after the agent waited
// for it.
type noTool struct{ name string }

func (e noTool) Error() string { return "no " + webmcpPrefix + e.name + " among the tools" }

// The WebMCP scripts of the tasks: the same asks as the other sides, by
// the page's own tools as Playwright offers them.

func (a *webmcpAgent) open(ctx context.Context, path string) error {
	a.s.changed.Store(false)
	return a.navigate(ctx, path)
}

// approve approves the order a person calls label: open__order first
// unless approve__order says it runs it itself (the page approves only
// rows in view), as the Pling script does.
func (a *webmcpAgent) approve(ctx context.Context, label string) (string, error) {
	t, err := a.need(ctx, "approve__order")
	if err != nil {
		return "", err
	}
	rec := a.record(t, label)
	if !strings.Contains(t.Description, "first runs open__order") {
		if _, err := a.call(ctx, "open__order", map[string]any{"record": rec}); err != nil {
			return "", err
		}
	}
	if _, err := a.call(ctx, "approve__order", map[string]any{"record": rec}); err != nil {
		return "", err
	}
	return label + " approved", nil
}

// need is the page's tool, or noTool when it did not come.
func (a *webmcpAgent) need(ctx context.Context, name string) (*sdk.Tool, error) {
	t, err := a.tool(ctx, name)
	if err == nil && t == nil {
		err = noTool{name}
	}
	return t, err
}

// on opens path and waits for the page's tool there.
func (a *webmcpAgent) on(ctx context.Context, path, name string) (*sdk.Tool, error) {
	if err := a.open(ctx, path); err != nil {
		return nil, err
	}
	return a.need(ctx, name)
}

// at opens path and calls the page's tool there.
func (a *webmcpAgent) at(ctx context.Context, path, tool string, args map[string]any) (string, error) {
	if _, err := a.on(ctx, path, tool); err != nil {
		return "", err
	}
	return a.call(ctx, tool, args)
}

// skuIn reads a product's SKU from a tool's description
// ("… lamp-head (Beacon headlamp), …") as an agent would.
func skuIn(t *sdk.Tool, name string) (string, error) {
	b, _ := json.Marshal(t)
	m := regexp.MustCompile(`([a-z0-9-]+) \(` + regexp.QuoteMeta(name) + `\)`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s does not name %q", t.Name, name)
	}
	return string(m[1]), nil
}

// totalIn reads the order's total from the mirror's text for checkout.
var totalIn = regexp.MustCompile(`(?i)\\?"?total\\?"?\s*[:=]\s*(\d+(?:\.\d+)?)`)

func webmcpApprove(ctx context.Context, a *webmcpAgent) (string, error) {
	if err := a.open(ctx, ordersAllRows); err != nil {
		return "", err
	}
	return a.approve(ctx, taskOrder)
}

func webmcpCheckout(ctx context.Context, a *webmcpAgent) (string, error) {
	t, err := a.on(ctx, "/shop/", "cart_add")
	if err != nil {
		return "", err
	}
	sku, err := skuIn(t, taskProduct)
	if err != nil {
		return "", err
	}
	if _, err := a.call(ctx, "cart_add", map[string]any{"sku": sku, "qty": 1}); err != nil {
		return "", err
	}
	// checkout is offered once the cart has something: wait for it before
	// the person is sent to the page, so a missing tool fails alone.
	if _, err := a.need(ctx, "checkout"); err != nil {
		return "", err
	}
	person := a.person(ctx, "/shop/")
	text, err := a.call(ctx, "checkout", map[string]any{})
	if err := afterPerson(person, err); err != nil {
		return "", err
	}
	m := totalIn.FindStringSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("checkout: no total in %.1200s", text)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return fmt.Sprintf("total €%.2f", v), nil
}

func webmcpSetting(ctx context.Context, a *webmcpAgent) (string, error) {
	n, _ := strconv.Atoi(taskPageSize)
	if _, err := a.at(ctx, "/settings/", "settings_save", map[string]any{"pageSize": n}); err != nil {
		return "", err
	}
	return "saved", nil
}

func webmcpTwoPages(ctx context.Context, a *webmcpAgent) (string, error) {
	if _, err := a.at(ctx, "/settings/", "settings_save", map[string]any{"refundAlerts": true}); err != nil {
		return "", err
	}
	if err := a.open(ctx, ordersAllRows); err != nil {
		return "", err
	}
	return a.approve(ctx, taskOrder2)
}

func webmcpHelpdeskClose(ctx context.Context, a *webmcpAgent) (string, error) {
	if _, err := a.at(ctx, "/tickets/", "tickets_search", map[string]any{"query": taskTicket}); err != nil {
		return "", err
	}
	t, err := a.need(ctx, "close__ticket")
	if err != nil {
		return "", err
	}
	if _, err := a.call(ctx, "close__ticket", map[string]any{"record": a.record(t, taskTicket)}); err != nil {
		return "", err
	}
	return taskTicket + " closed", nil
}

// webmcpHelpdeskSetting: every field of the form is required, so the
// agent reads the current values from a snapshot and sends them with the
// one it changes (Pling's side reads them from browser.page).
func webmcpHelpdeskSetting(ctx context.Context, a *webmcpAgent) (string, error) {
	t, err := a.on(ctx, "/admin/", "settings_save")
	if err != nil {
		return "", err
	}
	n, _ := strconv.Atoi(taskSLA)
	args := map[string]any{"slaHours": n}
	if len(requiredParams(t)) > 1 {
		snap, err := a.look(ctx, "")
		if err != nil {
			return "", err
		}
		if err := fillRequired(t, args, snap); err != nil {
			return "", err
		}
	}
	if _, err := a.call(ctx, "settings_save", args); err != nil {
		return "", err
	}
	return "saved", nil
}
