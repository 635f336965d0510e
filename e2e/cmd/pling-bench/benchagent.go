package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pling-go/pling/internal/chromium"
	"github.com/pling-go/pling/internal/cliflags"
	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/internal/helpdesk"
	"github.com/pling-go/pling/plinghttp"
)

// The browser-automation MCP server the agent benchmark compares with,
// installed with npm into a cache directory at run time.
const (
	playwrightMCPPackage = "@playwright/mcp"
	playwrightMCPVersion = "0.0.86"
)

// plingPackage is the command the bench builds and spawns as pling mcp.
const plingPackage = "github.com/pling-go/pling/cmd/pling"

// The sides of the agent benchmark, in report order.
const (
	sidePling      = "pling mcp"
	sidePWSnapshot = "playwright: snapshot"
	sidePWFind     = "playwright: find"
	// sidePWWebMCP is @playwright/mcp with WebMCP on: its browser started
	// with the WebMCP feature, the page's mirrored Pling tools offered to
	// the agent as webmcp_<tool>, clicking only where a task has no tool.
	sidePWWebMCP = "playwright: webmcp"
)

var agentSides = []string{sidePling, sidePWSnapshot, sidePWFind, sidePWWebMCP}

// agentReport is what pling-bench agent writes as JSON.
type agentReport struct {
	Date       string        `json:"date"`
	Machine    benchMachine  `json:"machine"`
	Browser    string        `json:"browser"`
	Playwright string        `json:"playwrightMCP"`
	Runs       int           `json:"runs"`
	TokensNote string        `json:"tokensNote"`
	Tasks      []agentResult `json:"tasks"`
	Totals     []agentFigure `json:"totals"`
	Targets    []bbTarget    `json:"targets"`
}

// agentResult is one task: every side's figures and the ratios
// Playwright/Pling per metric.
type agentResult struct {
	Name   string             `json:"name"`
	Ask    string             `json:"ask"`
	Sides  []agentFigure      `json:"sides"`
	Ratios map[string]ratios3 `json:"ratios"` // by Playwright side
	// PlingOverWebMCP is pling mcp ÷ playwright: webmcp (lower is
	// better for Pling), the way round for the WebMCP peer.
	PlingOverWebMCP *ratios3 `json:"plingOverWebMCP,omitempty"`
	Failure         string   `json:"failure,omitempty"`
	// WithoutPling marks a task on a site without Pling (pling mcp's
	// view only): it has targets of its own and is left out of the
	// totals, which are the Pling sites'.
	WithoutPling bool `json:"withoutPling,omitempty"`
}

type ratios3 struct {
	Calls   float64 `json:"calls"`
	Bytes   float64 `json:"bytes"`       // all received
	Results float64 `json:"resultBytes"` // tool results alone
	Time    float64 `json:"time"`
}

// agentFigure is one side on one task (or, in totals, over every task):
// the median over the runs of each metric.
type agentFigure struct {
	Side      string   `json:"side"`
	Calls     float64  `json:"calls"`
	Bytes     float64  `json:"bytes"`           // tool results
	ListBytes float64  `json:"toolListBytes"`   // instructions and tool lists
	Received  float64  `json:"received"`        // both: all the agent received
	Tokens    float64  `json:"tokensEstimated"` // of Received
	Servers   float64  `json:"servers"`
	TimeMs    bbDist   `json:"timeMs"`
	Verified  string   `json:"verified"`
	Result    string   `json:"result"`
	Note      string   `json:"note,omitempty"`
	Trace     []string `json:"trace,omitempty"`
	// ListChanged and Navigations are the run with the most
	// notifications/tools/list_changed per navigation.
	ListChanged float64 `json:"listChanged"`
	Navigations float64 `json:"navigations"`
}

func runBenchAgent(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := cliflags.New("pling-bench agent", stderr,
		"Usage: pling-bench agent [--runs N] [--tasks NAMES] [--dist DIR] [--pling BIN] [--out FILE]",
		"Runs the same scripted tasks through pling mcp and through "+playwrightMCPPackage+"@"+playwrightMCPVersion+" (snapshot and find paths, and WebMCP on: the page's mirrored tools),",
		"one MCP client (the Go SDK's) for all, and reports tool calls, bytes returned and time to verified completion, as ratios.",
	)
	dist := fl.String("dist", "", "serve the module from this directory (make wasm builds dist/) instead of the embedded copy")
	plingBin := fl.String("pling", "", "the pling binary to spawn as pling mcp (default: go build ./cmd/pling into a temporary directory)")
	runs := fl.Int("runs", 5, "runs of every task on every side; times are their median")
	only := fl.String("tasks", "", "run only these tasks (comma-separated names)")
	sidesFlag := fl.String("sides", "", "run only these sides (comma-separated: "+strings.Join(agentSides, ", ")+"), e.g. pling mcp and the WebMCP peer against another build's module")
	out := fl.String("out", filepath.Join("e2e", "artifacts", "bench-agent.json"), "write the JSON here, and the Markdown table (.md) and the chart (.svg) beside it")
	cacheDir := fl.String("cache", defaultAgentCache(), "where npm installs "+playwrightMCPPackage)
	chromium := fl.String("chromium", "", "the browser for both sides (default $PLING_CHROMIUM or /usr/bin/chromium)")
	dump := fl.String("dump", "", "write every instruction, tool list and tool result the agent read to this file")
	render := fl.String("render", "", "run nothing: write the Markdown and the chart of this JSON report again, its ratios and targets recomputed")
	_, exit, ok := cliflags.Parse(fl, args)
	if !ok {
		return exit
	}
	fail := failer(stderr, "agent")
	if *runs < 1 {
		fmt.Fprintln(stderr, "pling-bench agent: --runs must be at least 1")
		return 2
	}
	if *dump != "" {
		f, err := os.Create(*dump)
		if err != nil {
			return fail("%v", err)
		}
		defer f.Close()
		agentDump = f
	}
	if *render != "" {
		b, err := os.ReadFile(*render)
		var rep agentReport
		if err == nil {
			err = json.Unmarshal(b, &rep)
		}
		if err == nil {
			// The ratios and targets of this build, on the report's figures.
			for i := range rep.Tasks {
				rep.Tasks[i].Ratios = sideRatios(rep.Tasks[i].Sides)
				rep.Tasks[i].PlingOverWebMCP = plingOverWebMCP(rep.Tasks[i].Sides)
			}
			rep.Targets = reportTargets(rep.Tasks, rep.Totals)
			err = writeAgentReport(*render, &rep)
		}
		if err != nil {
			return fail("%v", err)
		}
		io.WriteString(stdout, agentMarkdown(&rep))
		return 0
	}
	all := slices.Concat(agentTasks, helpdeskTasks, plainTasks)
	tasks := all
	if *only != "" {
		tasks = nil
		for _, n := range strings.Split(*only, ",") {
			i := slices.IndexFunc(all, func(t agentTask) bool { return t.Name == strings.TrimSpace(n) })
			if i < 0 {
				fmt.Fprintf(stderr, "pling-bench agent: no task %q\n", n)
				return 2
			}
			tasks = append(tasks, all[i])
		}
	}
	sides := agentSides
	if *sidesFlag != "" {
		sides = nil
		for _, n := range strings.Split(*sidesFlag, ",") {
			if !slices.Contains(agentSides, strings.TrimSpace(n)) {
				fmt.Fprintf(stderr, "pling-bench agent: no side %q\n", n)
				return 2
			}
			sides = append(sides, strings.TrimSpace(n))
		}
	}
	progress := progressTo(stderr, "agent: ")
	rep, err := benchAgent(ctx, agentConfig{dist: *dist, pling: *plingBin, runs: *runs, cache: *cacheDir, chromium: *chromium, tasks: tasks, sides: sides, progress: progress})
	if err != nil {
		return fail("%v", err)
	}
	if err := writeAgentReport(*out, rep); err != nil {
		return fail("%v", err)
	}
	md := agentMarkdown(rep)
	io.WriteString(stdout, md)
	stem := strings.TrimSuffix(*out, filepath.Ext(*out))
	fmt.Fprintf(stdout, "\nwrote %s, %s.md, %s.svg\n", *out, stem, stem)
	for _, t := range rep.Tasks {
		if t.Failure != "" {
			return 1
		}
	}
	return 0
}

type agentConfig struct {
	dist, pling, cache, chromium string
	runs                         int
	tasks                        []agentTask
	sides                        []string // nil: every side
	progress                     func(string, ...any)
}

func defaultAgentCache() string { return userCache("bench-agent") }

// benchAgent serves the demo site, installs @playwright/mcp, and runs
// every task cfg.runs times on every side, interleaved so that a change
// in the machine's load falls on all sides alike.
func benchAgent(ctx context.Context, cfg agentConfig) (*agentReport, error) {
	rep := &agentReport{Date: reportDate(), Runs: cfg.runs,
		Playwright: playwrightMCPPackage + "@" + playwrightMCPVersion,
		TokensNote: "estimated tokens = bytes / 4 (no tokenizer is run)"}
	rep.Machine = startMachine()
	// Both sides launch the same binary: the headless shell where pling's
	// launcher would use it (Playwright's own headless default is a
	// headless shell too).
	rig := &agentRig{chromium: chromium.Headless(chromium.Path(cfg.chromium))}
	rep.Browser = browserVersion(rig.chromium)

	tmp, err := os.MkdirTemp("", "pling-bench-agent-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	rig.pling = cfg.pling
	if rig.pling == "" {
		rig.pling = filepath.Join(tmp, "pling")
		cfg.progress("go build -o %s %s", rig.pling, plingPackage)
		if b, err := exec.CommandContext(ctx, "go", "build", "-o", rig.pling, plingPackage).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s (run inside the repository, or pass --pling): %v\n%s", plingPackage, err, b)
		}
	}
	pw, err := playwrightMCP(ctx, cfg.cache, cfg.progress)
	if err != nil {
		return nil, err
	}
	rig.tmp = tmp
	rig.pwConfig = filepath.Join(tmp, "playwright-mcp.json")
	if err := os.WriteFile(rig.pwConfig, playwrightConfig(rig.chromium), 0o644); err != nil {
		return nil, err
	}
	// The snapshot and find sides add --config rig.pwConfig --no-webmcp;
	// the WebMCP side its own config, whose browser has WebMCP on.
	rig.pwArgv = append(pw, "--headless", "--isolated", "--output-dir", filepath.Join(tmp, "playwright-out"))
	rig.pwEnv = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "PLAYWRIGHT_BROWSERS_PATH="+filepath.Join(tmp, "no-browsers"))

	module := demosite.Module()
	if cfg.dist != "" {
		module = os.DirFS(cfg.dist)
	}
	if _, err := fs.Stat(module, "pling.wasm"); err != nil {
		return nil, errors.New("the module is not built: run make wasm, or pass --dist dist")
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	srv, err := demosite.New(sctx, module, demosite.Demo(), demosite.Options{Brotli: 5})
	if err != nil {
		return nil, err
	}
	// The help desk, the site written from the docs only (its paths are
	// not the demo's).
	hd, err := helpdesk.New(module, plinghttp.WithBrotli(5, 5))
	if err != nil {
		return nil, err
	}
	// Each site on a server of its own: the demo, the help desk, and the
	// same help desk without Pling.
	for _, s := range []struct {
		base *string
		h    http.Handler
	}{{&rig.base, srv}, {&rig.helpdesk, hd}, {&rig.plain, withoutPling(hd)}} {
		base, stop, err := serveLoopback(s.h)
		if err != nil {
			return nil, err
		}
		defer stop()
		*s.base = base
	}

	for _, t := range cfg.tasks {
		res := agentResult{Name: t.Name, Ask: t.Ask, Ratios: map[string]ratios3{}, WithoutPling: t.Site == sitePlain}
		all := map[string][]agentRun{}
		sides := cfg.sides
		if sides == nil {
			sides = agentSides
		}
		for i := 0; i < cfg.runs && res.Failure == ""; i++ {
			for _, side := range sides {
				if side == sidePWWebMCP && t.webmcp == nil {
					continue // a page without Pling mirrors no tools
				}
				tctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
				var run agentRun
				var err error
				switch side {
				case sidePling:
					run, err = rig.runPling(tctx, t)
				case sidePWWebMCP:
					run, err = rig.runPWWebMCP(tctx, t)
				default:
					run, err = rig.runPW(tctx, t, side == sidePWFind)
				}
				cancel()
				if err != nil {
					res.Failure = fmt.Sprintf("%s, run %d: %v", side, i+1, err)
					cfg.progress("%s: %s", t.Name, res.Failure)
					break
				}
				cfg.progress("%s run %d %-20s %2d calls %8d B %6.0f ms  %s", t.Name, i+1, side, run.meter.Calls, run.meter.Bytes, durMs(run.elapsed), run.result)
				all[side] = append(all[side], run)
			}
		}
		for _, side := range agentSides {
			if len(all[side]) > 0 {
				f := figureOf(side, all[side])
				if side == sidePling && res.WithoutPling {
					f.Verified = "inferred: the view's changes show it"
				}
				res.Sides = append(res.Sides, f)
			}
		}
		res.Ratios = sideRatios(res.Sides)
		res.PlingOverWebMCP = plingOverWebMCP(res.Sides)
		rep.Tasks = append(rep.Tasks, res)
	}
	rep.Totals = agentTotals(rep.Tasks)
	rep.Targets = reportTargets(rep.Tasks, rep.Totals)
	rep.Machine.LoadEnd = loadAverage()
	return rep, nil
}

func durMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// figureOf summarizes one side's runs of a task: medians, and the trace
// and result of the first run.
func figureOf(side string, runs []agentRun) agentFigure {
	med := func(f func(agentRun) float64) float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		return distOf(xs).P50
	}
	times := make([]float64, len(runs))
	for i, r := range runs {
		times[i] = durMs(r.elapsed)
	}
	f := agentFigure{Side: side,
		Calls:     med(func(r agentRun) float64 { return float64(r.meter.Calls) }),
		Bytes:     med(func(r agentRun) float64 { return float64(r.meter.Bytes) }),
		ListBytes: med(func(r agentRun) float64 { return float64(r.meter.ListBytes) }),
		Received:  med(func(r agentRun) float64 { return float64(r.meter.Bytes + r.meter.ListBytes) }),
		Servers:   med(func(r agentRun) float64 { return float64(r.meter.Servers) }),
		TimeMs:    distOf(times),
		Result:    runs[0].result, Note: runs[0].note, Trace: runs[0].meter.Trace}
	f.Tokens = f.Received / 4
	for i, r := range runs {
		if i == 0 || perNavigation(float64(r.meter.ListChanged), float64(r.meter.Navigations)) > perNavigation(f.ListChanged, f.Navigations) {
			f.ListChanged, f.Navigations = float64(r.meter.ListChanged), float64(r.meter.Navigations)
		}
	}
	switch side {
	case sidePling:
		f.Verified = "proven: the page's evidence"
	case sidePWWebMCP:
		f.Verified = "the page's evidence, as the mirror's text"
	default:
		f.Verified = "inferred: a later snapshot shows it"
	}
	return f
}

func figure(fs []agentFigure, side string) (agentFigure, bool) {
	i := slices.IndexFunc(fs, func(f agentFigure) bool { return f.Side == side })
	if i < 0 {
		return agentFigure{}, false
	}
	return fs[i], true
}

// sideRatios is Playwright/Pling per metric, for each Playwright side.
func sideRatios(fs []agentFigure) map[string]ratios3 {
	out := map[string]ratios3{}
	p, ok := figure(fs, sidePling)
	if !ok {
		return out
	}
	for _, side := range agentSides[1:] {
		if w, ok := figure(fs, side); ok {
			out[side] = ratios3{Calls: ratio(w.Calls, p.Calls), Bytes: ratio(w.Received, p.Received), Results: ratio(w.Bytes, p.Bytes), Time: ratio(w.TimeMs.P50, p.TimeMs.P50)}
		}
	}
	return out
}

// plingOverWebMCP is pling mcp ÷ playwright: webmcp per metric, nil
// when either side did not run.
func plingOverWebMCP(fs []agentFigure) *ratios3 {
	p, ok := figure(fs, sidePling)
	w, ok2 := figure(fs, sidePWWebMCP)
	if !ok || !ok2 {
		return nil
	}
	return &ratios3{Calls: ratio(p.Calls, w.Calls), Bytes: ratio(p.Received, w.Received), Results: ratio(p.Bytes, w.Bytes), Time: ratio(p.TimeMs.P50, w.TimeMs.P50)}
}

// The targets against the WebMCP peer, on every task: pling mcp
// receives at most half its bytes and makes no more calls.
const (
	webmcpBytesLimit = 0.5
	webmcpCallsLimit = 1.0
)

// webmcpTargets are those targets per completed task, then over all
// tasks.
func webmcpTargets(tasks []agentResult, totals []agentFigure) []bbTarget {
	var out []bbTarget
	add := func(name string, r *ratios3) {
		if r == nil {
			return
		}
		t := func(what string, v, limit float64) bbTarget {
			return target(what+" vs webmcp: "+name, v, limit, "Pling/Playwright-WebMCP", fmt.Sprintf("Pling/Playwright-WebMCP %.2f× (target ≤ %g×)", v, limit))
		}
		// The results alone too, as against the other sides: Playwright's
		// long tool list, fetched again on every change of the page's
		// tools, must not carry the bytes target by itself.
		out = append(out, t("bytes", r.Bytes, webmcpBytesLimit), t("result bytes", r.Results, webmcpBytesLimit), t("tool calls", r.Calls, webmcpCallsLimit))
	}
	for _, t := range tasks {
		if t.Failure == "" {
			add(t.Name, t.PlingOverWebMCP)
		}
	}
	add("all tasks", plingOverWebMCP(totals))
	return out
}

// agentTotals adds every side's medians over the tasks that every side
// completed.
func agentTotals(tasks []agentResult) []agentFigure {
	var out []agentFigure
	for _, side := range agentSides {
		f := agentFigure{Side: side}
		for _, t := range tasks {
			if t.Failure != "" || t.WithoutPling {
				continue
			}
			g, _ := figure(t.Sides, side)
			f.Calls += g.Calls
			f.Bytes += g.Bytes
			f.ListBytes += g.ListBytes
			f.Received += g.Received
			f.TimeMs.P50 += g.TimeMs.P50
			f.TimeMs.N = g.TimeMs.N
		}
		f.Tokens = f.Received / 4
		out = append(out, f)
	}
	return out
}

// reportTargets are the report's targets: against the snapshot and find
// paths, then against the WebMCP peer, without those against a side that
// did not run (a run of some sides only, --sides: its ratio is infinite,
// and JSON has no infinities).
func reportTargets(tasks []agentResult, totals []agentFigure) []bbTarget {
	var out []bbTarget
	for _, t := range slices.Concat(agentTargets(totals), webmcpTargets(tasks, totals), plainTargets(tasks), listChangedTargets(tasks)) {
		if !math.IsInf(t.Value, 0) && !math.IsNaN(t.Value) {
			out = append(out, t)
		}
	}
	return out
}

// agentTargets are the targets on the totals: each a Pling
// figure over a Playwright one, met at or below the limit.
func agentTargets(totals []agentFigure) []bbTarget {
	p, _ := figure(totals, sidePling)
	s, _ := figure(totals, sidePWSnapshot)
	f, _ := figure(totals, sidePWFind)
	t := func(name string, pv, wv, times float64, unit string) bbTarget {
		r := ratio(pv, wv)
		return target(name, r, 1/times, unit, fmt.Sprintf("Playwright/Pling %.1f× (target ≥ %g×)", ratio(wv, pv), times))
	}
	all := []bbTarget{
		t("bytes vs snapshot path", p.Received, s.Received, 20, "Pling/Playwright"),
		t("bytes vs find path", p.Received, f.Received, 5, "Pling/Playwright"),
		// The same without the instructions and tool lists, so a side's
		// long tool list alone cannot carry the bytes target.
		t("bytes vs snapshot path, tool results only", p.Bytes, s.Bytes, 20, "Pling/Playwright"),
		t("bytes vs find path, tool results only", p.Bytes, f.Bytes, 5, "Pling/Playwright"),
		t("tool calls vs snapshot path", p.Calls, s.Calls, 3, "Pling/Playwright"),
		t("tool calls vs find path", p.Calls, f.Calls, 3, "Pling/Playwright"),
		t("time vs snapshot path", p.TimeMs.P50, s.TimeMs.P50, 3, "Pling/Playwright"),
		t("time vs find path", p.TimeMs.P50, f.TimeMs.P50, 3, "Pling/Playwright"),
	}
	return all
}

// playwrightMCP installs @playwright/mcp into cacheDir (once; later runs
// reuse it), never letting it download a browser, and returns the
// command that starts it.
func playwrightMCP(ctx context.Context, cacheDir string, progress func(string, ...any)) ([]string, error) {
	pkgDir, _, err := npmCached(ctx, cacheDir, playwrightMCPPackage, playwrightMCPVersion, []string{"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1"}, progress)
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, err
	}
	return []string{node, filepath.Join(pkgDir, "cli.js")}, nil
}

// playwrightConfig launches the same Chromium pling mcp uses, headless,
// with the flags pling's launcher gives it on this machine, and extra.
func playwrightConfig(chromium string, extra ...string) []byte {
	args := append([]string{"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-gpu", "--mute-audio", "--hide-scrollbars"}, extra...)
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	b, _ := json.MarshalIndent(map[string]any{"browser": map[string]any{
		"browserName": "chromium", "isolated": true,
		"launchOptions":  map[string]any{"executablePath": chromium, "headless": true, "chromiumSandbox": false, "args": args},
		"contextOptions": map[string]any{"viewport": map[string]any{"width": 1280, "height": 900}},
	}}, "", "  ")
	return b
}

func browserVersion(bin string) string {
	b, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return bin
	}
	return strings.TrimSpace(string(b))
}

func writeAgentReport(out string, rep *agentReport) error {
	stem, err := writeArtifact(out, rep)
	if err != nil {
		return err
	}
	if err := os.WriteFile(stem+".md", []byte(agentMarkdown(rep)), 0o644); err != nil {
		return err
	}
	f, err := os.Create(stem + ".svg")
	if err != nil {
		return err
	}
	defer f.Close()
	return writeBenchSVG(f, "pling mcp beside @playwright/mcp "+playwrightMCPVersion+": scripted agent tasks", rep.Targets)
}

// agentMarkdown is the report as Markdown tables: per task and side, the
// ratios, and the targets.
func agentMarkdown(rep *agentReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Agent tasks, %s, %d CPUs (load %s), %s, %s; median of %d runs; tokens ≈ bytes/4 (estimated, no tokenizer).\n\n",
		rep.Date, rep.Machine.CPUs, rep.Machine.LoadStart, rep.Browser, rep.Playwright, rep.Runs)
	b.WriteString("| task | side | tool calls | result bytes | instructions + tool-list bytes | all received | ≈ tokens | time to verified completion | verified | reported |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, t := range rep.Tasks {
		for _, f := range t.Sides {
			res := f.Result
			if f.Note != "" {
				res += " (" + f.Note + ")"
			}
			res = strings.ReplaceAll(res, "|", "/")
			fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %s | %s |\n", t.Name, f.Side, f.Calls, f.Bytes, f.ListBytes, f.Received, f.Tokens, fmtMs(f.TimeMs.P50), f.Verified, res)
		}
		if t.Failure != "" {
			fmt.Fprintf(&b, "| %s | FAILED | | | | | | | | %s |\n", t.Name, strings.ReplaceAll(firstLine(t.Failure), "|", "/"))
		}
	}
	b.WriteString("\nPlaywright ÷ Pling, per task (higher is better for Pling):\n\n")
	b.WriteString("| task | calls (snapshot) | bytes (snapshot) | results only (snapshot) | time (snapshot) | calls (find) | bytes (find) | results only (find) | time (find) |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	rows := append([]agentResult(nil), rep.Tasks...)
	rows = append(rows, agentResult{Name: "**all tasks**", Ratios: sideRatios(rep.Totals)})
	for _, t := range rows {
		s, f := t.Ratios[sidePWSnapshot], t.Ratios[sidePWFind]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", t.Name, fmtRatio(s.Calls), fmtRatio(s.Bytes), fmtRatio(s.Results), fmtRatio(s.Time), fmtRatio(f.Calls), fmtRatio(f.Bytes), fmtRatio(f.Results), fmtRatio(f.Time))
	}
	b.WriteString("\npling mcp ÷ playwright: webmcp, per task (lower is better for Pling; targets: bytes ≤ 0.5×, calls ≤ 1× on every task); where the bytes go: results + instructions and tool lists:\n\n")
	b.WriteString("| task | calls | bytes | results only | time | pling mcp bytes | playwright: webmcp bytes | playwright: webmcp path |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|---|\n")
	rows = append(rows[:len(rows)-1], agentResult{Name: "**all tasks**", Sides: rep.Totals, PlingOverWebMCP: plingOverWebMCP(rep.Totals)})
	for _, t := range rows {
		r := t.PlingOverWebMCP
		if r == nil {
			continue
		}
		p, _ := figure(t.Sides, sidePling)
		w, _ := figure(t.Sides, sidePWWebMCP)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.0f + %.0f | %.0f + %.0f | %s |\n", t.Name, fmtRatio2(r.Calls, webmcpCallsLimit), fmtRatio2(r.Bytes, webmcpBytesLimit), fmtRatio(r.Results), fmtRatio(r.Time),
			p.Bytes, p.ListBytes, w.Bytes, w.ListBytes, strings.ReplaceAll(w.Note, "|", "/"))
	}
	b.WriteString("\nTargets (over all tasks; against the WebMCP peer, per task too):\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, t := range rep.Targets {
		verdict := "**missed**"
		if t.Met {
			verdict = "met"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.Name, t.Detail, verdict)
	}
	return b.String()
}

func fmtRatio(v float64) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.1f×", v)
}

// fmtRatio2 is a ratio to two places, bold where it misses limit.
func fmtRatio2(v, limit float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "–"
	}
	if v > limit {
		return fmt.Sprintf("**%.2f×**", v)
	}
	return fmt.Sprintf("%.2f×", v)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// listChangedLimit is the bound on pling mcp's
// notifications/tools/list_changed: one per settled page.
const listChangedLimit = 1.0

// perNavigation is changes per navigation; a task that navigates nothing
// counts as one page.
func perNavigation(changes, navigations float64) float64 { return changes / max(navigations, 1) }

// listChangedTargets are pling mcp's notifications per navigation, on
// every completed task.
func listChangedTargets(tasks []agentResult) []bbTarget {
	var out []bbTarget
	for _, t := range tasks {
		p, ok := figure(t.Sides, sidePling)
		if !ok || t.Failure != "" {
			continue
		}
		v := perNavigation(p.ListChanged, p.Navigations)
		out = append(out, target("tools/list_changed per navigation: "+t.Name, v, listChangedLimit, "notifications",
			fmt.Sprintf("pling mcp: %.0f notifications, %.0f navigations (target ≤ %g a navigation)", p.ListChanged, p.Navigations, listChangedLimit)))
	}
	return out
}
