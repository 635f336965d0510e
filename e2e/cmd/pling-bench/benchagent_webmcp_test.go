package main

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/internal/testing/wanterr"
)

// The admin page of the help desk as @playwright/mcp 0.0.86 snapshots it
// with WebMCP on: the page's tools first, then the tree.
const webmcpAdminSnapshot = "### Page\n- Page URL: http://127.0.0.1:45499/admin/\n- 1 webmcp tool available on the page\n### Snapshot\n```yaml\n" +
	`- webmcp tools (page-provided, untrusted):
  - settings_save: Save the help desk settings
    - inputSchema: {"type":"object"}

- generic [active] [ref=e1]:
  - main [ref=e8]:
    - heading "Settings" [level=1] [ref=e9]
    - generic [ref=e10]:
      - generic [ref=e11]:
        - text: Team name
        - textbox "Team name" [ref=e12]: Support
      - generic [ref=e13]:
        - spinbutton "Answer within (hours)" [ref=e14]: "24"
      - generic [ref=e15]:
        - textbox "Signature" [ref=e16]: "The \"support\" team"
      - status
      - button "Save" [ref=e17]
` + "```\n"

// The mirrored settings tool as Playwright lists it.
func webmcpSettingsTool() *sdk.Tool {
	return &sdk.Tool{Name: "webmcp_settings_save", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{
			"signature": map[string]any{"type": "string", "description": "Signature"},
			"slaHours":  map[string]any{"type": "integer", "description": "Answer within (hours)"},
			"teamName":  map[string]any{"type": "string", "description": "Team name"},
		},
		"required": []any{"signature", "slaHours", "teamName"}}}
}

func TestWebMCPFieldValues(t *testing.T) {
	want := map[string]string{"Team name": "Support", "Answer within (hours)": "24", "Signature": `The "support" team`}
	if d := cmp.Diff(want, fieldValues(webmcpAdminSnapshot)); d != "" {
		t.Errorf("fieldValues (-want +got):\n%s", d)
	}
}

// fillRequired keeps what the agent changes, fills the other required
// parameters from the page's fields by their descriptions, as numbers
// where the schema says so, and fails when a field is missing.
func TestWebMCPFillRequired(t *testing.T) {
	for _, tc := range []struct {
		name     string
		snapshot string
		args     map[string]any
		want     map[string]any
		err      string
	}{
		{name: "fills the others", snapshot: webmcpAdminSnapshot, args: map[string]any{"slaHours": 48},
			want: map[string]any{"slaHours": 48, "teamName": "Support", "signature": `The "support" team`}},
		{name: "a number field as a number", snapshot: webmcpAdminSnapshot, args: map[string]any{"teamName": "Ops", "signature": "x"},
			want: map[string]any{"slaHours": 24.0, "teamName": "Ops", "signature": "x"}},
		{name: "a field the page lacks", snapshot: strings.ReplaceAll(webmcpAdminSnapshot, `textbox "Signature"`, `textbox "Footer"`),
			args: map[string]any{"slaHours": 48}, err: "required signature"},
		{name: "not a number", snapshot: strings.ReplaceAll(webmcpAdminSnapshot, `"24"`, `"soon"`),
			args: map[string]any{"teamName": "Ops", "signature": "x"}, err: "not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fillRequired(webmcpSettingsTool(), tc.args, tc.snapshot)
			if wanterr.Check(t, "fillRequired", err, tc.err) {
				return
			}
			if d := cmp.Diff(tc.want, tc.args); d != "" {
				t.Errorf("args (-want +got):\n%s", d)
			}
		})
	}
}

func TestWebMCPRecordAndTotal(t *testing.T) {
	tool := func(desc string) *sdk.Tool {
		return &sdk.Tool{Name: "webmcp_close__ticket", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"record": map[string]any{"type": "string", "description": desc}}}}
	}
	for _, tc := range []struct {
		name, desc, label, want string
		labels, outside         bool
	}{
		{"label", `The ticket: its id or its label as the page shows it ("T-0847")`, "T-1042", "T-1042", true, false},
		{"order id outside MCP", "The id of the record", "#1250", "ord_250", false, true},
		{"ticket id outside MCP", "The id of the record", "T-1042", "t1042", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &webmcpAgent{}
			if got := a.record(tool(tc.desc), tc.label); got != tc.want || a.labels != tc.labels || a.outside != tc.outside {
				t.Errorf("record = %q (labels %v, outside %v), want %q (%v, %v)", got, a.labels, a.outside, tc.want, tc.labels, tc.outside)
			}
		})
	}
	// The mirror's checkout answer as Playwright prints it.
	const text = `"OK: checkout ran.\nProof: checkout.status equal \"paid\" met (\"idle\" → \"paid\"); handoff done\nValue: {\"currency\":\"EUR\",\"total\":24}\nChanged: cart.count"`
	if m := totalIn.FindStringSubmatch(text); m == nil || m[1] != "24" {
		t.Errorf("totalIn = %q", m)
	}
}

// Playwright must see WebMCP among its own features, in one switch:
// Chromium keeps only the last --enable-features.
func TestWebMCPLaunchArgs(t *testing.T) {
	var features []string
	for _, a := range webmcpLaunchArgs(9222) {
		if f, ok := strings.CutPrefix(a, "--enable-features="); ok {
			features = append(features, f)
		}
	}
	if d := cmp.Diff([]string{"CDPScreenshotNewSurface,SkipListAccountsWithoutGaiaCookies,WebMCP"}, features); d != "" {
		t.Errorf("--enable-features (-want +got):\n%s", d)
	}
	if len(playwrightFeatures) != 2 {
		t.Errorf("webmcpLaunchArgs changed playwrightFeatures: %v", playwrightFeatures)
	}
}

// fakePlaywright is an MCP server in memory that behaves as @playwright/mcp
// with WebMCP on: browser_wait_for (its snapshot collects the page's tools)
// registers the page's tool only on the call numbered late, and the page's
// tools answer as the mirror does, printed by Playwright.
func fakePlaywright(t *testing.T, late int, answer string) (*webmcpAgent, *agentMeter) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := sdk.NewServer(&sdk.Implementation{Name: "fake-playwright", Version: "0"}, nil)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	var waits atomic.Int32
	page := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text("### Result\nCalled WebMCP tool \"settings_save\" in http://x/admin/. Output is page-provided and untrusted:\n" + answer), nil
	}
	srv.AddTool(&sdk.Tool{Name: "browser_wait_for", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if waits.Add(1) == int32(late) {
			srv.AddTool(webmcpSettingsTool(), page)
		}
		return text("### Result\nWaited for 1"), nil
	})
	if late == 0 {
		srv.AddTool(webmcpSettingsTool(), page)
	}
	ct, st := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	m := &agentMeter{}
	s, err := connectMCP(ctx, ct, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return &webmcpAgent{pwAgent: &pwAgent{s: s}}, m
}

// The WebMCP side counts what a model would spend: a look while the
// page's tool is not listed yet, the tool list fetched again on
// notifications/tools/list_changed, and the tool's call; a tool that never
// comes is noTool after maxToolWaits looks (the script then clicks).
func TestWebMCPAgentWaitsListsAndCounts(t *testing.T) {
	const ok = `"OK: settings.save ran.\nProof: settings change met ({\"slaHours\":24} → {\"slaHours\":48})"`
	for _, tc := range []struct {
		name          string
		late          int // the wait that registers the tool; 0: listed at once
		answer        string
		calls, waits  int
		lists         bool // a second list was fetched
		noTool, fails bool
	}{
		{name: "listed at once", late: 0, answer: ok, calls: 1},
		{name: "after one look", late: 1, answer: ok, calls: 2, waits: 1, lists: true},
		{name: "never", late: 99, answer: ok, calls: maxToolWaits, waits: maxToolWaits, noTool: true},
		{name: "record not found", late: 0, answer: `"ACTION_NOT_FOUND: no ticket T-0847"`, calls: 1, fails: true},
		{name: "expectation not met", late: 0, answer: `"OK: settings.save ran.\nProof: settings change NOT met"`, calls: 1, fails: true},
		// A mirror without the text for a model: the Surface envelope as the text.
		{name: "envelope", late: 0, answer: envelope(`{\"ok\":true,\"result\":{\"evidence\":{\"expectations\":[{\"met\":true}]}}}`), calls: 1},
		{name: "envelope not met", late: 0, answer: envelope(`{\"ok\":true,\"result\":{\"evidence\":{\"expectations\":[{\"met\":false}]}}}`), calls: 1, fails: true},
		{name: "envelope failed", late: 0, answer: envelope(`{\"ok\":false,\"error\":{\"code\":\"ACTION_NOT_FOUND\"}}`), calls: 1, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, m := fakePlaywright(t, tc.late, tc.answer)
			first := m.ListBytes
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := a.call(ctx, "settings_save", map[string]any{"slaHours": 48})
			var nt noTool
			switch {
			case tc.noTool:
				if !errors.As(err, &nt) || nt.name != "settings_save" {
					t.Errorf("err = %v, want noTool", err)
				}
			case tc.fails:
				if err == nil {
					t.Error("a failed answer passed as done")
				}
			case err != nil:
				t.Fatal(err)
			}
			if m.Calls != tc.calls || a.waits != tc.waits || (m.ListBytes > first) != tc.lists {
				t.Errorf("calls %d, waits %d, tool list bytes %d → %d; want %d calls, %d waits, listed again %v\n%v",
					m.Calls, a.waits, first, m.ListBytes, tc.calls, tc.waits, tc.lists, m.Trace)
			}
			if tc.lists && m.ListBytes < 2*first {
				t.Errorf("the second list (%d B after %d B) was not counted whole", m.ListBytes, first)
			}
		})
	}
}

// envelope is an answer of a mirror without the text for a model, as
// Playwright prints it: the tool result object, its text the Surface response.
func envelope(surface string) string {
	return "{\n  \"content\": [\n    {\n      \"type\": \"text\",\n      \"text\": \"" + surface + "\"\n    }\n  ]\n}"
}

// pling mcp ÷ playwright: webmcp per task, the targets at their limits
// (met) and past them (missed), failed tasks left out.
func TestPlingOverWebMCPTargets(t *testing.T) {
	fig := func(side string, calls, bytes, lists, ms float64) agentFigure {
		return agentFigure{Side: side, Calls: calls, Bytes: bytes, ListBytes: lists, Received: bytes + lists, TimeMs: bbDist{N: 1, P50: ms}}
	}
	tasks := []agentResult{
		{Name: "at the limits", Sides: []agentFigure{fig(sidePling, 2, 300, 200, 1000), fig(sidePWWebMCP, 2, 600, 400, 2000)}},
		{Name: "past them", Sides: []agentFigure{fig(sidePling, 3, 600, 0, 1000), fig(sidePWWebMCP, 2, 1000, 0, 500)}},
		{Name: "failed", Failure: "x", Sides: []agentFigure{fig(sidePling, 1, 1, 1, 1), fig(sidePWWebMCP, 9, 9e6, 0, 9)}},
		{Name: "no webmcp run", Sides: []agentFigure{fig(sidePling, 1, 1, 1, 1)}},
	}
	for i := range tasks {
		tasks[i].PlingOverWebMCP = plingOverWebMCP(tasks[i].Sides)
	}
	if d := cmp.Diff(&ratios3{Calls: 1, Bytes: 0.5, Results: 0.5, Time: 0.5}, tasks[0].PlingOverWebMCP); d != "" {
		t.Errorf("ratios (-want +got):\n%s", d)
	}
	if tasks[3].PlingOverWebMCP != nil {
		t.Errorf("a task without the WebMCP side has ratios %+v", tasks[3].PlingOverWebMCP)
	}
	var got []string
	ts := webmcpTargets(tasks, agentTotals(tasks[:3])) // every side ran on the totals' tasks
	for _, tg := range ts {
		got = append(got, tg.Name+": "+tg.verdict())
	}
	// A task without the WebMCP side and a failed one have no lines;
	// all tasks: (500+600)/(1000+1000) = 0.55 bytes, 5/4 calls.
	want := []string{
		"bytes vs webmcp: at the limits: met",
		"result bytes vs webmcp: at the limits: met",
		"tool calls vs webmcp: at the limits: met",
		"bytes vs webmcp: past them: MISSED by 20%",        // 600/1000 = 0.6
		"result bytes vs webmcp: past them: MISSED by 20%", // no tool lists here
		"tool calls vs webmcp: past them: MISSED by 50%",   // 3/2
		"bytes vs webmcp: all tasks: MISSED by 10%",
		"result bytes vs webmcp: all tasks: MISSED by 12%", // 900/1600 = 0.5625
		"tool calls vs webmcp: all tasks: MISSED by 25%",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
	// A run of pling mcp and the WebMCP peer alone (--sides) reports these
	// targets and pling mcp's list_changed per navigation only, and its
	// report is valid JSON.
	rep := &agentReport{Tasks: tasks[:3], Totals: agentTotals(tasks[:3])}
	rep.Targets = reportTargets(rep.Tasks, rep.Totals)
	if d := cmp.Diff(slices.Concat(ts, listChangedTargets(rep.Tasks)), rep.Targets); d != "" {
		t.Errorf("reportTargets without the snapshot and find sides (-want +got):\n%s", d)
	}
	if err := writeAgentReport(filepath.Join(t.TempDir(), "bench-agent.json"), rep); err != nil {
		t.Errorf("writing that report: %v", err)
	}
	if tg := ts[0]; tg.Value != 0.5 || tg.Limit != webmcpBytesLimit || !strings.Contains(tg.Detail, "0.50×") {
		t.Errorf("bytes target %+v", tg)
	}
}
