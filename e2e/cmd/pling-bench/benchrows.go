package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	plingcdp "github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/chromium"
	"github.com/pling-go/pling/internal/cliflags"
	"github.com/pling-go/pling/internal/testing/mcptest"
	"github.com/pling-go/pling/internal/testing/syncbuf"
	"github.com/pling-go/pling/plinghttp"
)

func init() {
	registry.Add("rows", "a row action on a page of 2,000 and 10,000 orders through pling mcp ÷ the same call in the page's own script, and the records reader's runs per describe", runBenchRows)
}

// The rows benchmark (make bench-rows): an order page with n rows and
// five row actions of the kind, each with an expectation, served on
// loopback; the pling binary (pling mcp, attached to one Chromium over
// PLING_CDP) driven by the official Go MCP SDK client. One row action
// (approve) is called 20 times through pling mcp and 20 times in the
// page's own script, interleaved, on fresh pending rows.
//
// The in-page side awaits pling.surface.handle with the same invoke
// request: the call pling mcp itself sends into the page over CDP, so
// the runtime does the same work on both sides (validation, the row's
// availability, the handler, the expectation's before and after) and
// the ratio is what pling mcp adds: MCP over stdio, the bridge, the CDP
// round trip with its document check, the tool result's text, and any
// describe the bridge makes inside the call. pling mcp runs with
// --poll 0, so every describe it makes falls in its own calls' time and
// none in the in-page side's.
//
// The page counts its records reader's runs and wraps
// pling.surface.handle to see each request (pling mcp's included): a
// describe that ran with no other request in flight adds its reads to
// the per-describe figures, and each request's time in the page is
// kept, so that a call's time through pling mcp splits into the page's
// invoke, the page's describes, and the rest (transport and bridge).

// benchRowsPage: ?n= orders, statuses in turn pending, approved,
// shipped, cancelled; five row actions of kind "order" whose
// availability is checked row by row; counts kept as the rows change (a
// state read is cheap, as is the records reader: a map the page holds).
const benchRowsPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>Orders</title><link rel="icon" href="data:,">
<script src="/pling/pling.js" data-expose="*" data-webmcp="off"></script>
<script>
pling.configure({ rateLimit: { describe: { burst: 0 }, invoke: { burst: 0 } }, loop: { repeats: 0 } });
(function () {
  var n = Number(new URLSearchParams(location.search).get("n")) || 2000;
  var statuses = ["pending", "approved", "shipped", "cancelled"];
  var orders = [], byId = {}, rows = [], counts = { pending: 0, approved: 0, shipped: 0, delivered: 0, cancelled: 0 };
  for (var i = 0; i < n; i++) {
    var o = { id: "ord_" + (i + 1), number: 1001 + i, status: statuses[i % 4] };
    orders.push(o); byId[o.id] = o; counts[o.status]++;
    rows.push({ id: o.id, label: "#" + o.number, visible: i < 50 });
  }
  var B = window.__bench = { reads: 0, seq: 0, inflight: 0, perDescribe: [], overlapped: 0, log: [] };
  pling.records("order", function () { B.reads++; return rows; });
  ["pending", "approved", "shipped", "delivered", "cancelled"].forEach(function (s) {
    pling.state("orders." + s, function () { return counts[s]; });
  });
  function move(id, from, to) {
    var o = byId[id];
    if (!o || from.indexOf(o.status) < 0) throw new Error("Order " + id + " is not " + from.join(" or "));
    counts[o.status]--; o.status = to; counts[to]++;
    return { order: "#" + o.number, status: to };
  }
  [["approve", ["pending"], "approved"], ["ship", ["approved"], "shipped"], ["deliver", ["shipped"], "delivered"],
   ["cancel", ["pending", "approved"], "cancelled"], ["reopen", ["cancelled"], "pending"]].forEach(function (a) {
    pling.action({
      id: a[0], title: a[0][0].toUpperCase() + a[0].slice(1) + " order", record: { kind: "order", allowOffscreen: true },
      available: function (record) { return !record || (byId[record] && a[1].indexOf(byId[record].status) >= 0) || "The order is not " + a[1].join(" or "); },
      run: function (input) { return move(input.record, a[1], a[2]); },
      expect: { state: "orders." + a[2], change: "increase" }
    });
  });
  var handle = pling.surface.handle;
  pling.surface.handle = function (req, w) {
    var m = (typeof req === "string" ? JSON.parse(req) : req).method;
    var r0 = B.reads, alone = B.inflight === 0, seq = ++B.seq, t0 = performance.now();
    B.inflight++;
    function done(res) {
      B.inflight--;
      var e = { method: m, ms: performance.now() - t0 };
      B.log.push(e);
      if (m === "describe") e.bytes = JSON.stringify(res).length;
      if (m !== "describe") return;
      if (alone && B.seq === seq) B.perDescribe.push(B.reads - r0); else B.overlapped++;
    }
    return handle.call(this, req, w).then(function (res) { done(res); return res; }, function (e) { done(); throw e; });
  };
})();
</script></head><body><h1>Orders</h1></body></html>
`

// benchRowsInPage is one approve in the page's own script, timed there.
const benchRowsInPage = `(async (record, id) => {
  const t = performance.now();
  const res = await pling.surface.handle({ protocol: "pling.surface/0.1", id: id, method: "invoke", capability: "approve@order", input: { record: record } });
  const ms = performance.now() - t;
  const ev = res && res.ok && res.result && res.result.evidence;
  const ok = !!(ev && ev.expectations && ev.expectations.length && ev.expectations.every((e) => e.met));
  return { ms: ms, ok: ok, text: ok ? "" : JSON.stringify(res).slice(0, 600) };
})`

type brSide struct {
	Ms bbDist `json:"ms"`
}

type brSize struct {
	Rows int `json:"rows"`
	// MCP: approve through pling mcp, timed at the MCP client (CallTool
	// sent to its result read). InPage: the same invoke awaited in the
	// page (performance.now around pling.surface.handle).
	MCP    brSide  `json:"plingMCP"`
	InPage brSide  `json:"inPage"`
	Ratio  float64 `json:"ratio"` // MCP.P50 / InPage.P50; the target is at most 1.5
	// Where an MCP call's time goes, medians over its calls (ms): the
	// page's invoke, the page's describes the bridge made inside the
	// call, and the rest (stdio, the bridge, CDP, the result's text).
	MCPPageInvokeMs   float64 `json:"mcpPageInvokeP50Ms"`
	MCPPageDescribeMs float64 `json:"mcpPageDescribeP50Ms"`
	MCPRestMs         float64 `json:"mcpRestP50Ms"`
	// Two yardsticks for the rest, medians in the same loop (ms): an MCP
	// ping to pling mcp and back over stdio, and one Runtime.evaluate of
	// a constant in the page from the bench's own CDP connection (pling
	// mcp makes about three CDP round trips a call: the document check,
	// the invoke, the look for a navigation after it).
	// MCPCPUMs: the CPU time the pling mcp process spent per timed call
	// (its user and system time over the loop ÷ the calls, from
	// /proc/PID/stat in 10 ms ticks; 0 where there is no /proc).
	MCPCPUMs         float64 `json:"plingMCPCPUMsPerCall"`
	MCPPingMs        float64 `json:"mcpPingP50Ms"`
	CDPEvalMs        float64 `json:"cdpEvalP50Ms"`
	DescribesInCalls int     `json:"describesInCalls"` // over the 20 timed MCP calls
	DescribeBytes    int     `json:"describeBytes"`    // the largest describe's response, as JSON
	// The records reader's runs in each describe pling mcp made with no
	// other request in flight (the target: 1 each), and the describes it
	// overlapped with another request (not counted).
	DescribesCounted  int   `json:"describesCounted"`
	ReadsPerDescribe  []int `json:"readsPerDescribe"`
	DescribesOverlaps int   `json:"describesOverlapped"`
}

type brReport struct {
	Date    string         `json:"date"`
	Machine map[string]any `json:"machine"`
	Browser string         `json:"browser"`
	Command string         `json:"command"`
	Calls   int            `json:"calls"`
	Note    string         `json:"note"`
	Sizes   []brSize       `json:"sizes"`
}

func runBenchRows(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := cliflags.New("rows", stderr,
		"Usage: pling-bench rows [flags]",
		"Times one row action on an order page of 2,000 and 10,000 rows through pling mcp and in the page's own script, and counts the records reader's runs per describe.",
	)
	dist := fl.String("dist", "dist", "the module directory (make wasm)")
	plingBin := fl.String("pling", filepath.Join("bin", "pling"), "the pling binary (make build)")
	chromiumBin := fl.String("chromium", "", "the browser binary (default $PLING_CHROMIUM, else /usr/bin/chromium)")
	calls := fl.Int("n", 20, "timed calls on each side, per page size")
	out := fl.String("out", filepath.Join("e2e", "artifacts", "bench-rows.json"), "write the figures as JSON here")
	_, exit, ok := cliflags.Parse(fl, args)
	if !ok {
		return exit
	}
	fail := failer(stderr, "rows")
	progress := progressTo(stderr, "· ")
	if _, err := os.Stat(*plingBin); err != nil {
		return fail("no pling binary at %s (make build, or pass --pling)", *plingBin)
	}
	base, stop, err := serveRowsPage(*dist)
	if err != nil {
		return fail("%v", err)
	}
	defer stop()

	bin := chromium.Headless(chromium.Path(*chromiumBin))
	rep := &brReport{Date: time.Now().UTC().Format("2006-01-02"), Browser: browserVersion(bin), Calls: *calls,
		Machine: map[string]any{"cpus": goruntime.NumCPU(), "loadStart": loadAverage()},
		Command: "make bench-rows (go run ./e2e/cmd/pling-bench rows --dist dist --pling bin/pling)",
		Note: "approve@order on a fresh pending row each call, the two sides interleaved after 2 warm-up calls each; " +
			"pling mcp --poll 0 attached to the same Chromium; the in-page side awaits pling.surface.handle with the same invoke request (the call pling mcp sends into the page)"}
	for _, n := range []int{2000, 10000} {
		progress("%d rows", n)
		s, err := benchRowsSize(ctx, base, *plingBin, bin, n, *calls, progress)
		if err != nil {
			return fail("%d rows: %v", n, err)
		}
		rep.Sizes = append(rep.Sizes, s)
		fmt.Fprintf(stdout, "%6d rows: pling mcp %7.2f ms, in the page %6.2f ms: %.2f× (target ≤ 1.5); in an MCP call: page invoke %.2f ms, page describes %.2f ms, the rest %.2f ms (an MCP ping %.2f ms, a CDP evaluate %.2f ms; pling mcp's CPU %.1f ms a call); records reads per describe %v (%d describes counted, %d overlapped)\n",
			n, s.MCP.Ms.P50, s.InPage.Ms.P50, s.Ratio, s.MCPPageInvokeMs, s.MCPPageDescribeMs, s.MCPRestMs, s.MCPPingMs, s.CDPEvalMs, s.MCPCPUMs, s.ReadsPerDescribe, s.DescribesCounted, s.DescribesOverlaps)
	}
	rep.Machine["loadEnd"] = loadAverage()
	if _, err := writeArtifact(*out, rep); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	for _, s := range rep.Sizes {
		for _, r := range s.ReadsPerDescribe {
			if r != 1 {
				return fail("%d rows: the records reader ran %v times in the describes counted, want 1 each", s.Rows, s.ReadsPerDescribe)
			}
		}
	}
	return 0
}

// serveRowsPage serves the order page at /orders and the module from
// dist at /pling/ on loopback.
func serveRowsPage(dist string) (base string, stop func(), err error) {
	assets, err := plinghttp.New(os.DirFS(dist))
	if err != nil {
		return "", nil, err
	}
	if m := assets.Missing(); len(m) > 0 {
		return "", nil, fmt.Errorf("the module is not built (missing %v): run make wasm, or pass --dist", m)
	}
	mux := http.NewServeMux()
	mux.Handle("/pling/", assets)
	mux.HandleFunc("/orders", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, benchRowsPage)
	})
	return serveLoopback(mux)
}

type brPageEntry struct {
	Method string  `json:"method"`
	Ms     float64 `json:"ms"`
	Bytes  int     `json:"bytes"`
}

// brRig is one order page open in a browser of its own, with pling mcp
// attached to that browser and connected to an MCP client.
type brRig struct {
	cs     *sdk.ClientSession
	cmd    *exec.Cmd       // the pling mcp process
	stderr *syncbuf.Buffer // what it printed
	tab    context.Context // the page's tab, for the in-page side and the page's counts
	closes []func()
}

func (r *brRig) close() {
	for _, f := range slices.Backward(r.closes) {
		f()
	}
}

// openRowsRig opens the order page of n rows at base in a browser of its
// own (bin), attaches pling mcp (plingBin) to it and waits until it lists
// the row tool. The rig is closed by close, also after an error.
func openRowsRig(ctx context.Context, base, plingBin, bin string, n int, tool string) (*brRig, error) {
	rig := &brRig{stderr: &syncbuf.Buffer{}}
	out := &syncbuf.Buffer{}
	actx, acancel, err := plingcdp.NewAllocator(ctx, bin, remote.WebSocket, chromedp.CombinedOutput(out))
	if err != nil {
		return rig, err
	}
	rig.closes = append(rig.closes, acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	rig.closes = append(rig.closes, bcancel)
	if err := chromedp.Do(bctx); err != nil {
		return rig, fmt.Errorf("starting %s: %w", bin, err)
	}
	cdpURL := devToolsURL(out.String())
	if cdpURL == "" {
		return rig, errors.New("the browser printed no DevTools address")
	}
	url := fmt.Sprintf("%s/orders?n=%d", base, n)
	rig.cmd = exec.CommandContext(ctx, plingBin, "mcp", url, "--poll", "0")
	rig.cmd.Env = append(os.Environ(), "PLING_CDP="+cdpURL)
	rig.cmd.Stderr = rig.stderr
	rig.cs, err = sdk.NewClient(&sdk.Implementation{Name: "pling-bench-rows", Version: "0"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: rig.cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		return rig, fmt.Errorf("pling mcp: %w\n%s", err, rig.stderr.String())
	}
	rig.closes = append(rig.closes, func() { rig.cs.Close() })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		lt, err := rig.cs.ListTools(ctx, nil)
		if err != nil {
			return rig, fmt.Errorf("tools/list: %w\n%s", err, rig.stderr.String())
		}
		if hasTool(lt.Tools, tool) {
			break
		}
		if time.Now().After(deadline) {
			return rig, fmt.Errorf("no %s among the tools\n%s", tool, rig.stderr.String())
		}
	}
	infos, err := chromedp.Targets(bctx)
	if err != nil {
		return rig, err
	}
	for _, in := range infos {
		if in.Type == "page" && strings.Contains(in.URL, "/orders?n=") {
			var tcancel context.CancelFunc
			rig.tab, tcancel = chromedp.NewContext(bctx, chromedp.WithTargetID(in.TargetID))
			rig.closes = append(rig.closes, tcancel)
			return rig, nil
		}
	}
	return rig, errors.New("no tab on the order page")
}

// benchRowsSize measures one page size in a browser of its own.
func benchRowsSize(ctx context.Context, base, plingBin, bin string, n, calls int, progress func(string, ...any)) (brSize, error) {
	res := brSize{Rows: n}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	const tool = "approve__order"
	rig, err := openRowsRig(ctx, base, plingBin, bin, n, tool)
	defer rig.close()
	if err != nil {
		return res, err
	}
	cs, cmd, stderr, tab := rig.cs, rig.cmd, rig.stderr, rig.tab
	pageLog := func() ([]brPageEntry, error) {
		return chromedp.Run(tab, chromedp.Evaluate[[]brPageEntry](`window.__bench.log.splice(0)`))
	}

	// Pending rows are ord_1, ord_5, ord_9, …: each call approves a fresh one.
	next := 1
	row := func() string { r := fmt.Sprintf("ord_%d", next); next += 4; return r }
	mcpCall := func() (float64, error) {
		rec := row()
		t := time.Now()
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"record": rec}})
		ms := durMs(time.Since(t))
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w\n%s", tool, rec, err, stderr.String())
		}
		if r.IsError || !expectationsMet(r.StructuredContent) {
			return 0, fmt.Errorf("%s %s: %.800s", tool, rec, mcptest.Text(r))
		}
		return ms, nil
	}
	pageCall := func(i int) (float64, error) {
		rec := row()
		r, err := chromedp.Run(tab, chromedp.Evaluate[struct {
			Ms   float64 `json:"ms"`
			OK   bool    `json:"ok"`
			Text string  `json:"text"`
		}](fmt.Sprintf(`%s(%q, %q)`, benchRowsInPage, rec, fmt.Sprintf("bench-page-%d", i)), chromedp.EvalAwaitPromise))
		if err != nil {
			return 0, err
		}
		if !r.OK {
			return 0, fmt.Errorf("in the page, approve %s: %s", rec, r.Text)
		}
		return r.Ms, nil
	}
	for i := range 2 {
		if _, err := mcpCall(); err != nil {
			return res, err
		}
		if _, err := pageCall(-1 - i); err != nil {
			return res, err
		}
	}
	if _, err := pageLog(); err != nil {
		return res, err
	}
	var mcpMs, pageMs, invMs, descMs, restMs, pingMs, evalMs []float64
	cpu0 := cpuTicks(cmd)
	for i := range calls {
		ms, err := mcpCall()
		if err != nil {
			return res, err
		}
		log, err := pageLog()
		if err != nil {
			return res, err
		}
		var inv, desc float64
		for _, e := range log {
			if e.Method == "describe" {
				desc += e.Ms
				res.DescribesInCalls++
				res.DescribeBytes = max(res.DescribeBytes, e.Bytes)
			} else {
				inv += e.Ms
			}
		}
		mcpMs, invMs, descMs, restMs = append(mcpMs, ms), append(invMs, inv), append(descMs, desc), append(restMs, ms-inv-desc)
		pms, err := pageCall(i)
		if err != nil {
			return res, err
		}
		pageMs = append(pageMs, pms)
		if _, err := pageLog(); err != nil {
			return res, err
		}
		t := time.Now()
		if err := cs.Ping(ctx, nil); err != nil {
			return res, fmt.Errorf("ping: %w", err)
		}
		pingMs = append(pingMs, durMs(time.Since(t)))
		t = time.Now()
		if _, err := chromedp.Run(tab, chromedp.Evaluate[int](`1`)); err != nil {
			return res, err
		}
		evalMs = append(evalMs, durMs(time.Since(t)))
	}
	if cpu0 >= 0 {
		res.MCPCPUMs = float64(cpuTicks(cmd)-cpu0) * 10 / float64(calls)
	}
	res.MCP.Ms, res.InPage.Ms = distOf(mcpMs), distOf(pageMs)
	res.Ratio = finite(ratio(res.MCP.Ms.P50, res.InPage.Ms.P50))
	res.MCPPageInvokeMs, res.MCPPageDescribeMs, res.MCPRestMs = distOf(invMs).P50, distOf(descMs).P50, distOf(restMs).P50
	res.MCPPingMs, res.CDPEvalMs = distOf(pingMs).P50, distOf(evalMs).P50

	// Describes through pling mcp after the calls: a tools/list describes
	// a page whose change mark moved since the last describe
	// (refreshingMiddleware), so the page's DOM is touched before each of
	// three, on top of the describes the calls caused.
	for i := range 3 {
		if _, err := chromedp.Run(tab, chromedp.Evaluate[int](fmt.Sprintf(`document.body.dataset.benchLook = "%d", %d`, i, i))); err != nil {
			return res, err
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return res, err
		}
	}
	counts, err := chromedp.Run(tab, chromedp.Evaluate[struct {
		PerDescribe []int `json:"perDescribe"`
		Overlapped  int   `json:"overlapped"`
	}](`({ perDescribe: window.__bench.perDescribe, overlapped: window.__bench.overlapped })`))
	if err != nil {
		return res, err
	}
	res.ReadsPerDescribe, res.DescribesCounted, res.DescribesOverlaps = counts.PerDescribe, len(counts.PerDescribe), counts.Overlapped
	if res.DescribesCounted == 0 {
		return res, errors.New("pling mcp made no describe the page could count")
	}
	progress("%d rows: %d describes counted", n, res.DescribesCounted)
	return res, nil
}

// cpuTicks is the user plus system time of cmd's process in clock ticks
// (100 a second on Linux), or -1 when /proc does not say.
func cpuTicks(cmd *exec.Cmd) int64 {
	if cmd.Process == nil {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return -1
	}
	// The fields after the command's name, which is in parentheses and
	// may hold spaces: state is field 3, utime 14, stime 15.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return u + st
}

func hasTool(ts []*sdk.Tool, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

// expectationsMet: the result's evidence has expectations, all met.
func expectationsMet(structured any) bool {
	b, _ := json.Marshal(structured)
	var r struct {
		Evidence struct {
			Expectations []struct {
				Met bool `json:"met"`
			} `json:"expectations"`
		} `json:"evidence"`
	}
	if json.Unmarshal(b, &r) != nil || len(r.Evidence.Expectations) == 0 {
		return false
	}
	for _, e := range r.Evidence.Expectations {
		if !e.Met {
			return false
		}
	}
	return true
}

func finite(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	return x
}
