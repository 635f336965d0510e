package main

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A browser_find excerpt from @playwright/mcp 0.0.83 on the orders page
// (0.0.86 prints the same lines).
const pwFindExcerpt = `### Result
Found 3 matches for "#1250":

- generic [active] [ref=e1]:
  - main [ref=e9]:
        - table "Orders" [ref=e18]:
          - rowgroup [ref=e27]:
            - row [ref=e2473]:
              - cell [ref=e2480]:
                - 'button "Refund order #1249" [ref=e2481] [cursor=pointer]': Refund
            - row [ref=e2483]:
              - cell "#1250" [ref=e2484]
              - cell "Elif Walsh" [ref=e2485]
              - cell "pending" [ref=e2488]
              - cell [ref=e2490]:
                - 'button "Approve order #1250" [ref=e2491] [cursor=pointer]': Approve
                - 'button "Open order #1250" [ref=e2492] [cursor=pointer]': Open
            - row [ref=e2493]:
              - cell "#1251" [ref=e2494]
              - cell "approved" [ref=e2495]
      - spinbutton "Orders per page" [ref=e31]: "50"
      - checkbox "Email me when an order is refunded" [ref=e33]
      - button "Save \"all\"" [active] [ref=e40]
`

func TestFindRef(t *testing.T) {
	for _, tc := range []struct{ role, name, want string }{
		{"button", "Approve order #1250", "e2491"},
		{"button", "Open order #1250", "e2492"},
		{"cell", "#1250", "e2484"},
		{"spinbutton", "Orders per page", "e31"},
		{"checkbox", "Email me when an order is refunded", "e33"},
		{"button", `Save "all"`, "e40"},
		{"button", "Approve order #125", ""}, // a prefix is not the name
		{"link", "Approve order #1250", ""},  // nor another role
	} {
		t.Run(tc.role+" "+tc.name, func(t *testing.T) {
			got, ok := findRef(pwFindExcerpt, tc.role, tc.name)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("findRef = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

func TestRowHas(t *testing.T) {
	for _, tc := range []struct {
		first, cell string
		want        bool
	}{
		{"#1250", "pending", true},
		{"#1250", "approved", false}, // #1251's cell, past the next row
		{"#1251", "approved", true},
		{"#9999", "pending", false},
	} {
		if got := rowHas(pwFindExcerpt, tc.first, tc.cell); got != tc.want {
			t.Errorf("rowHas(%s, %s) = %v, want %v", tc.first, tc.cell, got, tc.want)
		}
	}
}

func TestAgentRatiosAndTargets(t *testing.T) {
	fig := func(side string, calls, bytes, ms float64) agentFigure {
		return agentFigure{Side: side, Calls: calls, Bytes: bytes, Received: bytes, TimeMs: bbDist{N: 1, P50: ms}}
	}
	tasks := []agentResult{
		{Name: "a", Sides: []agentFigure{fig(sidePling, 2, 100, 1000), fig(sidePWSnapshot, 6, 3000, 4000), fig(sidePWFind, 7, 400, 5000)}},
		{Name: "b", Sides: []agentFigure{fig(sidePling, 2, 100, 1000), fig(sidePWSnapshot, 6, 1000, 2000), fig(sidePWFind, 5, 600, 1000)}},
		{Name: "failed", Failure: "x", Sides: []agentFigure{fig(sidePling, 50, 1e6, 1e6)}},
	}
	got := sideRatios(tasks[0].Sides)
	want := map[string]ratios3{sidePWSnapshot: {Calls: 3, Bytes: 30, Results: 30, Time: 4}, sidePWFind: {Calls: 3.5, Bytes: 4, Results: 4, Time: 5}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sideRatios (-want +got):\n%s", d)
	}
	totals := agentTotals(tasks)
	if p, _ := figure(totals, sidePling); p.Calls != 4 || p.Bytes != 200 || p.Tokens != 50 || p.TimeMs.P50 != 2000 {
		t.Errorf("Pling totals %+v (a failed task must not count)", p)
	}
	var verdicts []string
	for _, tg := range agentTargets(totals) {
		verdicts = append(verdicts, tg.Name+": "+tg.verdict())
	}
	wantV := []string{
		"bytes vs snapshot path: met", // 4000/200 = 20×
		"bytes vs find path: met",     // 1000/200 = 5×
		"bytes vs snapshot path, tool results only: met",
		"bytes vs find path, tool results only: met",
		"tool calls vs snapshot path: met", // 12/4 = 3×
		"tool calls vs find path: met",     // 12/4
		"time vs snapshot path: met",       // 6000/2000 = 3×
		"time vs find path: met",           // 6000/2000
	}
	if d := cmp.Diff(wantV, verdicts); d != "" {
		t.Errorf("targets at exactly their limits (-want +got):\n%s", d)
	}
	tasks[1].Sides[2].Bytes, tasks[1].Sides[2].Received = 599, 599 // find path: 999/200 < 5×
	tg := agentTargets(agentTotals(tasks))[1]
	if tg.Met || math.Abs(tg.Value-200.0/999) > 1e-12 || !strings.Contains(tg.Detail, "5.0×") {
		t.Errorf("bytes vs find path below 5×: %+v", tg)
	}
	// What the agent received counts the instructions and tool lists too;
	// the results-only line does not.
	t.Run("tool lists count", func(t *testing.T) {
		tasks := []agentResult{{Name: "a", Sides: []agentFigure{
			{Side: sidePling, Bytes: 100, ListBytes: 900, Received: 1000, Calls: 1},
			{Side: sidePWFind, Bytes: 400, ListBytes: 20000, Received: 20400, Calls: 3},
		}}}
		tg := agentTargets(agentTotals(tasks))
		if !tg[1].Met || math.Abs(tg[1].Value-1000.0/20400) > 1e-12 {
			t.Errorf("bytes vs find path, all received: %+v", tg[1])
		}
		if tg[3].Met || math.Abs(tg[3].Value-100.0/400) > 1e-12 {
			t.Errorf("bytes vs find path, results only: %+v", tg[3])
		}
		if p, _ := figure(agentTotals(tasks), sidePling); p.Tokens != 250 {
			t.Errorf("tokens %v, want all received / 4", p.Tokens)
		}
	})
}

func TestAgentMarkdown(t *testing.T) {
	rep := &agentReport{Date: "2026-01-02", Runs: 1, Playwright: "@playwright/mcp@0.0.83"}
	rep.Tasks = []agentResult{{Name: "setting", Sides: []agentFigure{
		{Side: sidePling, Calls: 1, Bytes: 700, ListBytes: 300, Received: 1000, Tokens: 250, TimeMs: bbDist{P50: 900}, Verified: "proven", Result: "saved"},
		{Side: sidePWSnapshot, Calls: 5, Bytes: 7000, ListBytes: 3000, Received: 10000, Tokens: 2500, TimeMs: bbDist{P50: 1800}, Verified: "inferred", Result: "saved"},
		{Side: sidePWWebMCP, Calls: 2, Bytes: 700, ListBytes: 45000, Received: 45700, TimeMs: bbDist{P50: 1800}, Result: "saved", Note: "page tools only"},
	}}}
	rep.Tasks[0].Ratios = sideRatios(rep.Tasks[0].Sides)
	rep.Tasks[0].PlingOverWebMCP = plingOverWebMCP(rep.Tasks[0].Sides)
	rep.Totals = agentTotals(rep.Tasks)
	rep.Targets = reportTargets(rep.Tasks, rep.Totals)
	md := agentMarkdown(rep)
	for _, want := range []string{
		"| setting | pling mcp | 1 | 700 | 300 | 1000 | 250 | 900 ms | proven | saved |",
		"| setting | 5.0× | 10.0× | 10.0× | 2.0× |",
		"| bytes vs snapshot path | Playwright/Pling 10.0× (target ≥ 20×) | **missed** |",
		"| tool calls vs snapshot path | Playwright/Pling 5.0× (target ≥ 3×) | met |",
		"| setting | 0.50× | 0.02× | 1.0× | 0.5× | 700 + 300 | 700 + 45000 | page tools only |",
		"| **all tasks** | 0.50× | 0.02× | 1.0× | 0.5× | 700 + 300 | 700 + 45000 |  |",
		"| bytes vs webmcp: setting | Pling/Playwright-WebMCP 0.02× (target ≤ 0.5×) | met |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestAgentBenchSmoke runs one task once on every side: pling mcp on the
// demo site, and @playwright/mcp installed from npm. It needs the built
// module (PLING_DIST, make wasm), Chromium, node and npm; without npm it
// skips, unless PLING_REQUIRE_NPM=1.
func TestAgentBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns browsers and installs an npm package: not in -short mode")
	}
	dist := os.Getenv("PLING_DIST")
	if dist == "" {
		t.Skip("PLING_DIST is not set (make wasm, then PLING_DIST=$PWD/dist)")
	}
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("PLING_REQUIRE_NPM") == "1" {
				t.Fatalf("PLING_REQUIRE_NPM=1 and %s is missing: %v", tool, err)
			}
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "pling")
	if b, err := exec.CommandContext(ctx, "go", "build", "-o", bin, plingPackage).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	// runOnce runs task once on sides (nil: every side), and fails t
	// unless the task completed.
	runOnce := func(t *testing.T, task agentTask, sides []string) *agentReport {
		t.Helper()
		rep, err := benchAgent(ctx, agentConfig{dist: dist, pling: bin, runs: 1, cache: defaultAgentCache(), tasks: []agentTask{task},
			sides: sides, progress: t.Logf})
		if err != nil {
			if os.Getenv("PLING_REQUIRE_NPM") != "1" && strings.Contains(err.Error(), "npm install") {
				t.Skipf("npm cannot install %s: %v", playwrightMCPPackage, err)
			}
			t.Fatal(err)
		}
		if f := rep.Tasks[0].Failure; f != "" {
			t.Fatal(f)
		}
		return rep
	}
	task := agentTasks[2]
	if task.Name != "setting" {
		t.Fatalf("task 2 is %q", task.Name)
	}
	rep := runOnce(t, task, nil)
	var sides []string
	for _, f := range rep.Tasks[0].Sides {
		sides = append(sides, f.Side)
		if f.Calls < 1 || f.Bytes < 1 || f.TimeMs.P50 <= 0 || f.Result != "saved" {
			t.Errorf("%s: %+v", f.Side, f)
		}
	}
	if d := cmp.Diff(agentSides, sides); d != "" {
		t.Errorf("sides (-want +got):\n%s", d)
	}
	if p, _ := figure(rep.Tasks[0].Sides, sidePling); !strings.HasPrefix(p.Verified, "proven") {
		t.Errorf("pling mcp verified %q", p.Verified)
	}
	out := filepath.Join(t.TempDir(), "bench-agent.json")
	if err := writeAgentReport(out, rep); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".json", ".md", ".svg"} {
		if st, err := os.Stat(strings.TrimSuffix(out, ".json") + ext); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", ext, err)
		}
	}

	// A row action by the label a person reads, through Playwright MCP
	// with WebMCP on: the mirror's approve__order on "#1250" of the
	// 500-row orders page, beside pling mcp (the other two sides' whole
	// snapshots of that page are left to make bench-agent).
	t.Run("row action by label through the WebMCP peer", func(t *testing.T) {
		approve := agentTasks[0]
		if approve.Name != "approve" {
			t.Fatalf("task 0 is %q", approve.Name)
		}
		rep := runOnce(t, approve, []string{sidePling, sidePWWebMCP})
		w, ok := figure(rep.Tasks[0].Sides, sidePWWebMCP)
		if !ok || w.Result != taskOrder+" approved" || !strings.Contains(w.Note, "records by label") || strings.Contains(w.Note, "clicked") {
			t.Errorf("the WebMCP peer: %+v", w)
		}
		if !slices.ContainsFunc(w.Trace, func(c string) bool { return strings.HasPrefix(c, `webmcp_approve__order {"record":"`+taskOrder+`"}`) }) {
			t.Errorf("no webmcp_approve__order by label in %q", w.Trace)
		}
		if rep.Tasks[0].PlingOverWebMCP == nil {
			t.Error("no pling mcp ÷ WebMCP ratios")
		}
	})

	// The help desk without pling.js: pling mcp through its view only,
	// beside Playwright MCP's snapshot path, and the targets of a site
	// without Pling.
	t.Run("the help desk without Pling", func(t *testing.T) {
		task := plainTasks[1]
		rep := runOnce(t, task, []string{sidePling, sidePWSnapshot})
		p, _ := figure(rep.Tasks[0].Sides, sidePling)
		if p.Result != "saved" || !slices.ContainsFunc(p.Trace, func(c string) bool { return strings.HasPrefix(c, "browser.act ") }) {
			t.Errorf("pling mcp on the help desk without Pling: %+v", p)
		}
		var met int
		for _, tg := range rep.Targets {
			if (tg.Name == "bytes vs snapshot path: "+task.Name || tg.Name == "calls vs snapshot path: "+task.Name) && tg.Met {
				met++
			}
		}
		if met != 2 {
			t.Errorf("the targets without Pling: %+v", rep.Targets)
		}
	})
}

func TestPlingRecordAndSKU(t *testing.T) {
	tool := func(name, desc, recordDesc string) *sdk.Tool {
		return &sdk.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"record": map[string]any{"type": "string", "description": recordDesc}}}}
	}
	for _, tc := range []struct {
		name, recordDesc, want string
		outside                bool
	}{
		// today's main: ids only, so the bench maps the label itself
		{"ids only", "The id of the order record to act on", "ord_250", true},
		// site sessions: the tool takes the label a person reads
		{"labels", `The order to act on: its id (e.g. "ord_1") or its label as the page shows it`, "#1250", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &plingAgent{cur: &mcpServer{tools: map[string]*sdk.Tool{"approve__order": tool("approve__order", "Approve order", tc.recordDesc)}}}
			if got := a.record("approve__order", "#1250"); got != tc.want || a.outsideIDs != tc.outside {
				t.Errorf("record = %q (outside MCP %v), want %q (%v)", got, a.outsideIDs, tc.want, tc.outside)
			}
		})
	}
	a := &plingAgent{cur: &mcpServer{tools: map[string]*sdk.Tool{"cart_add": tool("cart_add",
		"Add to cart. Adds a product to the cart. Products: tent-2p (Trailhead 2-person tent), lamp-head (Beacon headlamp), socks-wool (Merino hiking socks)", "")}}}
	for name, want := range map[string]string{"Beacon headlamp": "lamp-head", "Merino hiking socks": "socks-wool", "Beacon": ""} {
		got, err := a.skuOf(name)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("skuOf(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

// rowNamed finds the help desk's row by its link and reads a later cell
// of it, not one of the next row.
func TestRowNamed(t *testing.T) {
	const snap = `- row [ref=e254]:
  - cell [ref=e255]:
    - link "T-1042" [ref=e256] [cursor=pointer]:
      - /url: /tickets/view.html?id=t1042
  - cell "Shipping label is blank" [ref=e257]
  - cell "closed" [ref=e260]
- row [ref=e270]:
  - cell [ref=e271]:
    - link "T-1043" [ref=e272] [cursor=pointer]:
  - cell "open" [ref=e273]`
	for _, tc := range []struct {
		link, cell string
		want       bool
	}{{"T-1042", "closed", true}, {"T-1042", "open", false}, {"T-1043", "open", true}, {"T-1044", "open", false}} {
		if got := rowNamed(snap, tc.link, tc.cell); got != tc.want {
			t.Errorf("rowNamed(%s, %s) = %v, want %v", tc.link, tc.cell, got, tc.want)
		}
	}
}

// TestListChangedTargets: pling mcp's notifications/tools/list_changed
// are judged per navigation (a task that navigates nothing as one page),
// per task, and a failed task is left out.
func TestListChangedTargets(t *testing.T) {
	pling := func(changed, navs float64) []agentFigure {
		return []agentFigure{{Side: sidePling, ListChanged: changed, Navigations: navs}}
	}
	tasks := []agentResult{
		{Name: "one page", Sides: pling(1, 0)},
		{Name: "two pages", Sides: pling(2, 2)},
		{Name: "storm", Sides: pling(5, 1)},
		{Name: "failed", Failure: "x", Sides: pling(9, 0)},
	}
	var got []string
	for _, tg := range listChangedTargets(tasks) {
		got = append(got, tg.Name+": "+tg.verdict())
	}
	want := []string{
		"tools/list_changed per navigation: one page: met",
		"tools/list_changed per navigation: two pages: met",
		"tools/list_changed per navigation: storm: MISSED by 400%",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
}

// TestAfterPerson: a call that handed over to the person fails with the
// person's error when they failed (the call's failure follows from it),
// else with its own.
func TestAfterPerson(t *testing.T) {
	callErr, personErr := errors.New("call"), errors.New("no tab")
	for _, tc := range []struct {
		name         string
		person, call error
		want         string
	}{
		{"both done", nil, nil, ""},
		{"the call failed", nil, callErr, "call"},
		{"the person failed", personErr, nil, "the person: no tab"},
		{"both failed", personErr, callErr, "the person: no tab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			person := make(chan error, 1)
			person <- tc.person
			err := afterPerson(person, tc.call)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want || tc.person != nil && !errors.Is(err, personErr) {
				t.Errorf("afterPerson = %v, want %q", err, tc.want)
			}
		})
	}
}
