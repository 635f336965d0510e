package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	plingcdp "github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// Site-session tools of pling mcp: when the server lists browser.open,
// one server navigates between pages; without it, every page is a server
// of its own.
const plingOpenTool = "browser.open"

// plingAgent drives pling mcp: the tools the page declares, invoked by
// name, outcomes read from their evidence.
type plingAgent struct {
	rig     *agentRig
	base    string // the site the task is on
	meter   *agentMeter
	cdpURL  string
	browser context.Context // the person's handle on the browser
	servers []*mcpServer
	cur     *mcpServer
	// sessions: the server offered browser.open; labels: a record was
	// named by its label, not an id resolved outside MCP.
	sessions, outsideIDs bool
	stderr               syncbuf.Buffer
}

// open gets a server on path whose tools include want: browser.open on
// a site session, else a new pling mcp server on that page.
func (a *plingAgent) open(ctx context.Context, path, want string) error {
	if a.cur != nil && a.cur.tools[plingOpenTool] != nil {
		r, err := a.cur.call(ctx, plingOpenTool, map[string]any{"url": path})
		if err != nil {
			return err
		}
		if r.IsError {
			return fmt.Errorf("%s %s: %.1200s", plingOpenTool, path, r.Text)
		}
		return a.waitTool(ctx, want)
	}
	cmd := exec.CommandContext(ctx, a.rig.pling, "mcp", a.base+path, "--poll", "0")
	cmd.Env = append(os.Environ(), "PLING_CDP="+a.cdpURL)
	cmd.Stderr = &a.stderr
	s, err := spawnMCP(ctx, cmd, a.meter)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, a.stderr.String())
	}
	a.servers = append(a.servers, s)
	a.cur = s
	a.sessions = s.tools[plingOpenTool] != nil
	return a.waitTool(ctx, want)
}

// waitTool lists the tools until want is among them (a site session
// loads the page's tools beside the handshake, and after a navigation).
// Only the list that has it is counted: an agent lists on
// notifications/tools/list_changed.
func (a *plingAgent) waitTool(ctx context.Context, want string) error {
	before := a.meter.ListBytes
	for deadline := time.Now().Add(30 * time.Second); ; {
		if a.cur.tools[want] != nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no tool %s on the page; tools %v\n%s", want, toolNames(a.cur.tools), a.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
		a.meter.ListBytes = before
		if err := a.cur.listTools(ctx); err != nil {
			return err
		}
	}
}

func toolNames[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// record is what the agent passes as a folded tool's record for the row
// a person calls label: the label itself when the tool says it takes
// one; else the demo's id for it (ord_N is #1000+N), known outside MCP,
// and the report says so.
func (a *plingAgent) record(tool, label string) string {
	if t := a.cur.tools[tool]; t != nil {
		var in struct {
			Properties map[string]struct{ Description string }
		}
		b, _ := json.Marshal(t.InputSchema)
		_ = json.Unmarshal(b, &in)
		if strings.Contains(strings.ToLower(in.Properties["record"].Description), "label") {
			return label
		}
	}
	a.outsideIDs = true
	n, _ := strconv.Atoi(strings.TrimPrefix(label, "#"))
	return fmt.Sprintf("ord_%d", n-1000)
}

// skuOf reads a product's SKU from cart_add's description
// ("… lamp-head (Beacon headlamp), …") as an agent would.
func (a *plingAgent) skuOf(name string) (string, error) {
	t := a.cur.tools["cart_add"]
	if t == nil {
		return "", errors.New("no cart_add tool")
	}
	return skuIn(t, name)
}

// plingResult is the part of a tool result the scripts read.
type plingResult struct {
	Value    json.RawMessage `json:"value"`
	Evidence *struct {
		Expectations []struct {
			Met bool `json:"met"`
		} `json:"expectations"`
		Handoff string `json:"handoff"`
	} `json:"evidence"`
	raw string
}

// invoke calls a page tool. A failure, or an expectation the page says
// is not met, fails the run; so does a write whose outcome the evidence
// does not prove (no expectation met).
func (a *plingAgent) invoke(ctx context.Context, tool string, args map[string]any) (*plingResult, error) {
	// A tool the page offers only once it is available (checkout, after
	// cart_add) comes with notifications/tools/list_changed: list again.
	if err := a.waitTool(ctx, tool); err != nil {
		return nil, err
	}
	r, err := a.cur.call(ctx, tool, args)
	if err != nil {
		return nil, err
	}
	if r.IsError {
		return nil, fmt.Errorf("%s: %.1200s", tool, r.Text)
	}
	var res plingResult
	_ = json.Unmarshal(r.Structured, &res)
	res.raw = r.Text
	if ro := a.cur.tools[tool].Annotations; ro != nil && ro.ReadOnlyHint {
		return &res, nil
	}
	if res.Evidence == nil || len(res.Evidence.Expectations) == 0 {
		return nil, fmt.Errorf("%s: no evidence of the outcome: %.1200s", tool, r.Text)
	}
	for _, e := range res.Evidence.Expectations {
		if !e.Met {
			return nil, fmt.Errorf("%s: an expectation is not met: %.1200s", tool, r.Text)
		}
	}
	return &res, nil
}

// personHandoff is the person answering the handoff in the tab on path:
// the assistant's panel says what to do; they enter the code the bank's
// window shows, confirm, and press Done.
func (a *plingAgent) personHandoff(ctx context.Context, path string) <-chan error {
	return personAtHandoff(ctx, func(path string) (context.Context, bool) {
		infos, _ := chromedp.Targets(a.browser)
		for _, in := range infos {
			if in.Type == "page" && strings.Contains(in.URL, path) {
				tab, _ := chromedp.NewContext(a.browser, chromedp.WithTargetID(in.TargetID))
				return tab, true
			}
		}
		return nil, false
	}, path)
}

// personAtHandoff is the person at the tab on path, found by tabOn, once
// the page's handoff panel shows: the same steps on every side that has
// the page ask them.
func personAtHandoff(ctx context.Context, tabOn func(path string) (context.Context, bool), path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		var tab context.Context
		for deadline := time.Now().Add(time.Minute); tab == nil; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) || ctx.Err() != nil {
				done <- fmt.Errorf("no tab on %s", path)
				return
			}
			tab, _ = tabOn(path)
		}
		tctx, cancel := context.WithTimeout(tab, time.Minute)
		defer cancel()
		const panel = `dialog.pling-ui[data-pling-ui=handoff]`
		done <- chromedp.Do(tctx,
			chromedp.WaitVisible(chromedp.CSS(panel)),
			chromedp.WaitVisible(chromedp.CSS(`#tds-code`)),
			chromedp.SendKeys(chromedp.CSS(`#tds-code`), taskOTP),
			chromedp.Click(chromedp.CSS(`#tds-confirm`)),
			chromedp.Click(chromedp.CSS(panel+` [data-pling-ui-answer=yes]`)),
		)
	}()
	return done
}

// pwAgent drives @playwright/mcp with its standard tools, in one of two
// ways: reading whole snapshots (browser_snapshot), or searching them
// (browser_find). Refs come from the text the tools return.
type pwAgent struct {
	s        *mcpServer
	base     string
	find     bool
	snapshot string // the last whole snapshot, while the page has not changed
}

func (a *pwAgent) navigate(ctx context.Context, path string) error {
	a.snapshot = ""
	r, err := a.s.call(ctx, "browser_navigate", map[string]any{"url": a.base + path})
	if err == nil && r.IsError {
		err = fmt.Errorf("browser_navigate %s: %.1200s", path, r.Text)
	}
	return err
}

// locate is the ref of the node with this role and name: from a
// browser_find for the name, or from the page's snapshot (taken when the
// one at hand is stale).
func (a *pwAgent) locate(ctx context.Context, role, name string) (string, error) {
	if a.find {
		r, err := a.s.call(ctx, "browser_find", map[string]any{"text": name})
		if err != nil {
			return "", err
		}
		if ref, ok := findRef(r.Text, role, name); ok {
			return ref, nil
		}
		return "", fmt.Errorf("browser_find %q: no %s with that name: %.1200s", name, role, r.Text)
	}
	for fresh := false; ; fresh = true {
		if a.snapshot == "" || fresh {
			if _, err := a.look(ctx, name); err != nil {
				return "", err
			}
		}
		if ref, ok := findRef(a.snapshot, role, name); ok {
			return ref, nil
		}
		if fresh {
			return "", fmt.Errorf("no %s %q in the snapshot", role, name)
		}
	}
}

// look is a later look at the page: browser_find for text on the find
// path, a whole snapshot on the other.
func (a *pwAgent) look(ctx context.Context, text string) (string, error) {
	name, args := "browser_snapshot", map[string]any{}
	if a.find {
		name, args = "browser_find", map[string]any{"text": text}
	}
	r, err := a.s.call(ctx, name, args)
	if err != nil {
		return "", err
	}
	if r.IsError {
		return "", fmt.Errorf("%s: %.1200s", name, r.Text)
	}
	if !a.find {
		a.snapshot = r.Text
	}
	return r.Text, nil
}

// click clicks the node. When the click fails because the page replaced
// the element (a list that re-renders as it scrolls), the agent looks
// again and clicks the new one, once, as a careful agent would.
func (a *pwAgent) click(ctx context.Context, role, name string) error {
	for try := 0; ; try++ {
		ref, err := a.locate(ctx, role, name)
		if err != nil {
			return err
		}
		r, err := a.s.call(ctx, "browser_click", map[string]any{"target": ref, "element": name})
		a.snapshot = ""
		if err != nil || !r.IsError {
			return err
		}
		if try > 0 || !strings.Contains(r.Text, "detached") {
			return fmt.Errorf("browser_click %q: %.1200s", name, r.Text)
		}
	}
}

func (a *pwAgent) typeInto(ctx context.Context, role, name, text string) error {
	ref, err := a.locate(ctx, role, name)
	if err != nil {
		return err
	}
	r, err := a.s.call(ctx, "browser_type", map[string]any{"target": ref, "element": name, "text": text})
	if err == nil && r.IsError {
		err = fmt.Errorf("browser_type %q: %.1200s", name, r.Text)
	}
	return err
}

// agentRig is what every run shares: the site, the pling binary, the
// browser and the Playwright MCP command.
type agentRig struct {
	base, pling, chromium string
	helpdesk              string // the help desk's base URL
	plain                 string // the help desk without Pling
	tmp                   string // the run's temporary directory
	pwArgv                []string
	pwConfig              string // the snapshot and find sides' config
	pwEnv                 []string
}

// siteOf is the base URL of the site t runs on.
func (r *agentRig) siteOf(t agentTask) string {
	switch t.Site {
	case "helpdesk":
		return r.helpdesk
	case sitePlain:
		return r.plain
	}
	return r.base
}

// agentRun is one run of a task on one side: its meter, its wall clock
// from spawn to verified completion, what it reported.
type agentRun struct {
	meter   agentMeter
	elapsed time.Duration
	result  string
	note    string
}

// runPling starts the clock, launches the browser pling mcp attaches to
// (pling mcp would launch the same one itself; here the bench keeps a
// handle on it for the person), and runs the task's script.
func (r *agentRig) runPling(ctx context.Context, t agentTask) (agentRun, error) {
	var run agentRun
	start := time.Now()
	out := &syncbuf.Buffer{}
	actx, acancel, err := plingcdp.NewAllocator(ctx, r.chromium, remote.WebSocket, chromedp.CombinedOutput(out))
	if err != nil {
		return run, err
	}
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx); err != nil {
		return run, fmt.Errorf("starting %s: %w", r.chromium, err)
	}
	a := &plingAgent{rig: r, base: r.siteOf(t), meter: &run.meter, browser: bctx, cdpURL: devToolsURL(out.String())}
	if a.cdpURL == "" {
		return run, errors.New("the browser printed no DevTools address")
	}
	defer func() {
		for _, s := range a.servers {
			s.close()
		}
	}()
	res, err := t.pling(ctx, a)
	run.elapsed, run.result = time.Since(start), res
	switch {
	case a.sessions:
		run.note = "one site session (" + plingOpenTool + ")"
	default:
		run.note = fmt.Sprintf("one page per server (%d)", run.meter.Servers)
	}
	if a.outsideIDs {
		run.note += "; record id from the label outside MCP"
	}
	return run, err
}

// runPW spawns @playwright/mcp (which launches its browser on the first
// navigation) and runs the task's script on the snapshot or find path.
func (r *agentRig) runPW(ctx context.Context, t agentTask, find bool) (agentRun, error) {
	var run agentRun
	start := time.Now()
	s, stderr, err := r.spawnPW(ctx, &run.meter, "--config", r.pwConfig, "--no-webmcp")
	if err != nil {
		return run, err
	}
	defer s.close()
	for _, need := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_wait_for"} {
		if s.tools[need] == nil {
			return run, fmt.Errorf("@playwright/mcp lists no %s", need)
		}
	}
	if find && s.tools["browser_find"] == nil {
		return run, errors.New("@playwright/mcp lists no browser_find")
	}
	res, err := t.pw(ctx, &pwAgent{s: s, base: r.siteOf(t), find: find})
	run.elapsed, run.result = time.Since(start), res
	if err != nil {
		err = fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return run, err
}

// spawnPW spawns @playwright/mcp with the rig's arguments and args, its
// stderr kept for the error of a failed run.
func (r *agentRig) spawnPW(ctx context.Context, m *agentMeter, args ...string) (*mcpServer, *syncbuf.Buffer, error) {
	argv := append(append([]string(nil), r.pwArgv...), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = r.pwEnv
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	s, err := spawnMCP(ctx, cmd, m)
	if err != nil {
		return nil, nil, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return s, stderr, nil
}

func devToolsURL(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "DevTools listening on "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}
