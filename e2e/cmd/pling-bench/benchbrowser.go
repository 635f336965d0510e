package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	plingcdp "github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/chromium"
	"github.com/pling-go/pling/internal/cliflags"
)

// The WebMCP polyfill the browser benchmark compares with, installed with
// npm into a cache directory at run time (never into the repository).
const (
	polyfillPackage = "@mcp-b/webmcp-polyfill"
	polyfillVersion = "5.1.0"
)

type bbOptions struct {
	reps, visits int
	timeout      time.Duration
}

// bbReport is what pling-bench browser writes as JSON. Times are
// milliseconds, sizes bytes.
type bbReport struct {
	// Date is when the run began, UTC (the docs give it with the figures).
	Date                string       `json:"date,omitempty"`
	Browser             string       `json:"browser"`
	Machine             benchMachine `json:"machine"`
	V8                  string       `json:"v8"`
	Server              string       `json:"server"`
	CrossOriginIsolated bool         `json:"crossOriginIsolated"`
	TimerResolutionUs   float64      `json:"timerResolutionUs"`
	Polyfill            struct {
		Package string `json:"package"`
		Version string `json:"version"`
		File    string `json:"file"`
	} `json:"polyfill"`
	Scripts  bbScripts       `json:"scripts"`
	Visits   bbVisits        `json:"visits"`
	Caching  bbCachingReport `json:"caching"`
	Describe bbDescribe      `json:"describe"`
	Invoke   bbInvoke        `json:"invoke"`
	Observer bbObserver      `json:"observer"`
	Snapshot bbSnapshot      `json:"snapshot"`
	// FirstCall is the first executeTool on native WebMCP.
	FirstCall *bbFirstCall `json:"firstCall,omitempty"`
	Targets   []bbTarget   `json:"targets"`
}

type bbSizes struct {
	Raw    int `json:"raw"`
	Gzip   int `json:"gzip"`
	Brotli int `json:"brotli"`
}

type bbScripts struct {
	Shim     bbSizes `json:"shim"`
	Polyfill bbSizes `json:"polyfill"`
	// PageScripts are the /pling/ scripts the orders page fetched before
	// any agent call, with the bytes on the wire.
	PageScripts   map[string]int `json:"pageScripts"`
	ShimLoad      bbDist         `json:"shimLoadMs"`
	PolyfillLoad  bbDist         `json:"polyfillLoadMs"`
	ShimEval      bbDist         `json:"shimEvalMs"`
	PolyfillEval  bbDist         `json:"polyfillEvalMs"`
	LoadRatio     float64        `json:"loadRatio"` // shim ÷ polyfill, p50
	EvalRatio     float64        `json:"evalRatio"`
	BrotliRatio   float64        `json:"brotliRatio"`
	ModuleSizes   bbSizes        `json:"moduleSizes"` // pling.wasm, fetched only when an agent arrives
	WasmExecSizes bbSizes        `json:"wasmExecSizes"`
	ModuleBrotliQ int            `json:"moduleBrotliQuality"`
}

// bbVisit is one agent arriving on a loaded page: its first describe.
type bbVisit struct {
	OK           bool    `json:"ok"`
	Ms           float64 `json:"ms"`
	LoaderMs     float64 `json:"loaderMs"`    // call → instantiate starts (wasm_exec.js)
	CompileMs    float64 `json:"compileMs"`   // fetch + compile + instantiate
	StartMs      float64 `json:"startMs"`     // Go start, declarations, describe
	GoStartMs    float64 `json:"goStartMs"`   // … of which Go's start until the bridge is ready
	FirstCallMs  float64 `json:"firstCallMs"` // … and init, the page's declarations, the describe
	Streaming    bool    `json:"streaming"`
	WasmTransfer int     `json:"wasmTransfer"`
	WasmEncoded  int     `json:"wasmEncoded"`
	WasmFetchMs  float64 `json:"wasmFetchMs"`
	ExecTransfer int     `json:"execTransfer"`
	Isolated     bool    `json:"isolated"`
	Capabilities int     `json:"capabilities"`
	// CacheHit and CacheWritten are set on traced visits: Blink found the
	// module's compiled code in the code cache (v8.wasm.moduleCacheHit),
	// and V8 serialized it for the cache (v8.wasm.cachedModule).
	CacheHit     bool `json:"cacheHit,omitempty"`
	CacheWritten bool `json:"cacheWritten,omitempty"`
	// Timer is what V8's code-caching timer did on a traced visit.
	Timer *bbCachingTimer `json:"cachingTimer,omitempty"`
	// Before are the /pling/ files the page had fetched before the
	// describe, with their encoded (on the wire) body sizes.
	Before map[string]int `json:"before,omitempty"`
}

// bbCachingTimer is V8's code-caching timer on one traced visit
// (src/wasm/module-compiler.cc). Once 1,000 B of top-tier code exist,
// V8 posts a task 2 s ahead (--wasm-caching-timeout-ms); when it runs it
// caches if no top-tier code was published in the last 2 s, and else
// re-posts itself for the time left, handing the milliseconds to
// CallDelayedOnWorkerThread, which takes seconds: the re-armed timer
// fires 1,000× later. RearmS is that predicted delay, from the
// top-tier publications seen before the first run.
type bbCachingTimer struct {
	TopTierBatches int       `json:"topTierBatches"`          // wasm.OnFinishedUnits
	TopTierSpanMs  float64   `json:"topTierSpanMs"`           // first to last publication
	Runs           int       `json:"runs"`                    // the task ran (ThreadPool_RunTask)
	FirstRunMs     float64   `json:"firstRunMs"`              // after the first publication
	FirstDelayMs   float64   `json:"firstDelayMs"`            // the delay it was posted with
	LaterDelaysMs  []float64 `json:"laterDelaysMs,omitempty"` // re-posted tasks that ran
	RearmS         float64   `json:"rearmS"`                  // 0: it cached on its first run
	Chunks         int       `json:"chunks"`                  // wasm.CompilationChunkFinished
}

func (c *bbCachingTimer) String() string {
	if c == nil {
		return "no top-tier code"
	}
	s := fmt.Sprintf("%d top-tier batches over %.2f s", c.TopTierBatches, c.TopTierSpanMs/1000)
	switch {
	case c.Runs == 0 && c.Chunks > 0:
		return s + fmt.Sprintf("; %d caching events without the timer (no timeout, or 1 MB of top-tier code)", c.Chunks)
	case c.Runs == 0:
		return s + "; timer never ran"
	case c.Chunks > 0 && c.RearmS == 0:
		return s + fmt.Sprintf("; ran +%.2f s, cached", c.FirstRunMs/1000)
	default:
		s += fmt.Sprintf("; ran +%.2f s, re-armed for %.0f s (meant: %.0f ms)", c.FirstRunMs/1000, c.RearmS, c.RearmS)
		if c.Chunks > 0 {
			s += fmt.Sprintf(", %d caching events", c.Chunks)
		}
		return s
	}
}

type bbVisits struct {
	Page string `json:"page"`
	// ColdFirst is the very first visit of a fresh profile; Cold are
	// visits after Network.clearBrowserCache (HTTP and code cache).
	ColdFirst bbVisit   `json:"coldFirst"`
	Cold      []bbVisit `json:"cold"`
	ColdMs    bbDist    `json:"coldMs"`
	// CacheWrittenMs is how long after the first describe the compiled
	// module appeared in the profile's code cache (-1: not within
	// CacheWaitMs, the first visit staying open that long).
	CacheWrittenMs float64   `json:"cacheWrittenMs"`
	CacheWaitMs    float64   `json:"cacheWaitMs"`
	CodeCacheBytes int64     `json:"codeCacheBytes"`
	Second         []bbVisit `json:"second"` // new tab, same profile
	SecondMs       bbDist    `json:"secondMs"`
	SecondTraced   bbVisit   `json:"secondTraced"` // one more, traced: was the code cache hit?
	Reload         []bbVisit `json:"reload"`       // the same tab reloaded (same renderer process)
	ReloadMs       bbDist    `json:"reloadMs"`
	SecondOverCold float64   `json:"secondOverCold"`
	ReloadOverCold float64   `json:"reloadOverCold"`
	Floor          *bbFloor  `json:"floor,omitempty"`
}

// bbFloor takes the cold path apart (see __bench.floor).
type bbFloor struct {
	Bytes       int     `json:"bytes"`
	CacheReadMs bbDist  `json:"cacheReadMs"`  // fetch(pling.wasm).arrayBuffer() from the HTTP cache
	CompileMs   float64 `json:"compileMs"`    // WebAssembly.compile of those bytes, the renderer's first
	FirstStart  float64 `json:"firstStartMs"` // instantiate + Go start until the bridge is ready, first
	WarmStart   bbDist  `json:"warmStartMs"`  // … again on the same, now compiled, module
}

// bbCachingReport is the caching investigation: the experiments in the
// run's browser (default flags), and again in a second browser whose V8
// caches compiled code as soon as it exists (ForcedJSFlags), with the
// orders page's second visits there.
type bbCachingReport struct {
	Default       []bbCaching `json:"defaultFlags"`
	ForcedJSFlags string      `json:"forcedJsFlags,omitempty"`
	Forced        []bbCaching `json:"forced,omitempty"`
	ForcedOrders  *bbVisits   `json:"forcedOrders,omitempty"`
}

// bbCaching is one caching experiment: the same module under different
// bytes and headers, visited twice in new tabs.
type bbCaching struct {
	Name          string  `json:"name"`
	CacheControl  string  `json:"cacheControl"`
	Streaming     bool    `json:"streaming"`
	StayMs        float64 `json:"stayMs"` // how long the first visit stayed open after its describe
	First         bbVisit `json:"first"`
	Second        bbVisit `json:"second"`
	CacheWritten  bool    `json:"cacheWritten"`
	HitOnSecond   bool    `json:"hitOnSecond"`
	SecondOverFst float64 `json:"secondOverFirst"`
}

type bbDescribe struct {
	Ours100       bbDist  `json:"ours100Ms"`
	Ours1000      bbDist  `json:"ours1000Ms"`
	Ours1000Caps  int     `json:"ours1000Capabilities"`
	Ours1000Trunc bool    `json:"ours1000Truncated"`
	Ours1000Bytes int     `json:"ours1000Bytes"`
	Poly100       bbDist  `json:"polyfillGetTools100Ms"`
	Poly1000      bbDist  `json:"polyfillGetTools1000Ms"`
	Poly1000Tools int     `json:"polyfillGetTools1000Tools"`
	Poly1000Bytes int     `json:"polyfillGetTools1000Bytes"`
	Timeout0      bbDist  `json:"setTimeout0Ms"` // the floor under getTools (it awaits one setTimeout(0))
	Ratio1000     float64 `json:"ratio1000"`     // ours ÷ polyfill at 1,000, p50
	OursRegister  float64 `json:"oursDeclare1000Ms"`
	PolyRegister  float64 `json:"polyfillRegister1000Ms"`
	RegisterRatio float64 `json:"declareRatio1000"`
}

type bbInvoke struct {
	Ours     bbDist  `json:"oursMs"`
	Polyfill bbDist  `json:"polyfillExecuteToolMs"`
	Ratio    float64 `json:"ratio"`
}

type bbEdits struct {
	Ms       bbDist `json:"ms"`
	Elements int    `json:"elements"`
	Rows     int    `json:"rows"`
}

type bbObserver struct {
	PolyfillHasObserver bool   `json:"polyfillHasObserver"`
	PolyfillObserves    string `json:"polyfillObserves"`
	// Pages: edit kind (textContent|data) → page (virtualized|all) →
	// pling|polyfill|none.
	Pages map[string]map[string]map[string]bbEdits `json:"pages"`
	// Ratio is ours ÷ polyfill per textContent edit, p50, on the page as
	// shipped (virtualized); the others for the other edit and page.
	Ratio         float64 `json:"ratio"`
	RatioAllRows  float64 `json:"ratioAllRows"`
	RatioData     float64 `json:"ratioData"`
	RatioDataAll  float64 `json:"ratioDataAllRows"`
	OverheadRatio float64 `json:"overheadRatio"` // (ours − none) ÷ (polyfill − none), textContent, as shipped
}

type bbSnapshotPage struct {
	AXText        string   `json:"-"` // the compact snapshot, written beside the JSON
	DescribeBytes int      `json:"describeBytes"`
	AXBytes       int      `json:"axSnapshotBytes"`
	AXRawBytes    int      `json:"axTreeJSONBytes"`
	AXRows        int      `json:"axRows"`
	DOMRows       int      `json:"domRows"`
	Folds         []bbFold `json:"folds"`
}

type bbFold struct {
	ID        string `json:"id"`
	Total     int    `json:"total"`
	Visible   int    `json:"visible"`
	Offscreen int    `json:"offscreen"`
}

type bbSnapshot struct {
	Virtualized  bbSnapshotPage `json:"virtualized"`
	AllRows      bbSnapshotPage `json:"allRows"`
	PerRowTools  int            `json:"perRowTools"`
	PerRowBytes  int            `json:"perRowBytes"`
	RatioAllRows float64        `json:"describeOverAXAllRows"`
	RatioPerRow  float64        `json:"describeOverPerRow"`
	RatioVirtual float64        `json:"describeOverAXVirtualized"`
}

func runBenchBrowser(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := cliflags.New("bench-browser", stderr,
		"Usage: pling-bench browser [flags]",
		"Runs one headless Chromium against the pling serve handler (in-process, cross-origin isolated) and",
		"measures, in the page, the shim beside the WebMCP polyfill: script bytes and load, the first describe",
		"cold and on a second visit, describe at 100 and 1,000 capabilities, a no-op invoke, the cost of a DOM",
		"edit under each one's observer, and the orders page's describe against its ARIA snapshot. The code-cache",
		"investigation runs its experiments there and again in a second browser with --forced-js-flags.",
	)
	dist := fl.String("dist", "dist", `the module directory (make wasm builds dist/); "" serves the copy embedded in this binary`)
	out := fl.String("out", filepath.Join("e2e", "artifacts", "bench-browser.json"), "write the figures as JSON here, and the chart beside it (.svg)")
	browserBin := fl.String("chromium", "", "the browser binary (default $PLING_CHROMIUM, else "+chromium.Default+")")
	polyfill := fl.String("polyfill", "", "the polyfill's IIFE bundle (default: npm install "+polyfillPackage+"@"+polyfillVersion+" into --cache)")
	cacheDir := fl.String("cache", defaultBenchCache(), "where npm installs the polyfill")
	reps := fl.Int("n", 300, "samples per micro-measurement")
	visits := fl.Int("visits", 8, "visits per cold and per second-visit measurement")
	quality := fl.Int("brotli", brotli.BestCompression, "brotli quality for the served files (as pling serve)")
	forced := fl.String("forced-js-flags", "--wasm-caching-timeout-ms=0", `V8 flags of the second browser of the caching investigation ("" skips it)`)
	only := fl.String("only", "", "run only these steps (comma-separated: "+strings.Join(benchStepNames, ",")+"); the targets of the others are left out")
	pos, exit, ok := cliflags.Parse(fl, args)
	if !ok {
		return exit
	}
	if len(pos) > 0 || *reps < 10 || *visits < 1 || *quality < 0 || *quality > brotli.BestCompression {
		fl.Usage()
		return 2
	}
	fail := failer(stderr, "browser")
	progress := progressTo(stderr, "bench-browser: ")

	rep := &bbReport{Date: reportDate(), Server: "pling serve handler (demosite), in-process (COOP same-origin, COEP require-corp)"}
	rep.Machine = startMachine()
	rep.Polyfill.Package = polyfillPackage
	polyFile, polyVer, err := polyfillIIFE(ctx, *polyfill, *cacheDir, progress)
	if err != nil {
		return fail("the polyfill: %v", err)
	}
	rep.Polyfill.File, rep.Polyfill.Version = polyFile, polyVer
	poly, err := os.ReadFile(polyFile)
	if err != nil {
		return fail("%v", err)
	}

	sctx, stopServer := context.WithCancel(ctx)
	defer stopServer()
	pages, err := serveBenchPages(sctx, *dist, poly, *quality, rep, progress)
	if err != nil {
		return fail("%v", err)
	}
	defer pages.close()
	base, mux, experiments := pages.base, pages.mux, pages.experiments

	bin := chromium.Path(*browserBin)
	b, err := startBenchBrowser(bin)
	if err != nil {
		return fail("%v", err)
	}
	defer b.close()
	if v, err := chromedp.CallBrowser(b.ctx, browser.GetVersion, cdp.Empty{}); err == nil {
		rep.Browser, rep.V8 = v.Product, v.JsVersion
	}
	progress("%s (V8 %s), pages from %s", rep.Browser, rep.V8, base)

	opt := bbOptions{reps: *reps, visits: *visits, timeout: 5 * time.Minute}
	steps := []struct {
		key, name string
		run       func() error
	}{
		{"isolation", "isolation and timer resolution", func() error { return b.isolation(base, rep) }},
		{"scripts", "script load and evaluation: the shim vs the polyfill", func() error { return b.scripts(base, opt, rep) }},
		{"visits", "first describe: cold page, second visit, reload", func() error {
			v, err := b.visits(base, "/orders/", opt, 12*time.Second, progress)
			if err == nil {
				rep.Visits = *v
				rep.Scripts.PageScripts = v.ColdFirst.Before
			}
			return err
		}},
		{"caching", "what makes Chromium keep the compiled module", func() error {
			var err error
			rep.Caching.Default, err = b.caching(base, experiments, progress)
			if err != nil || *forced == "" {
				return err
			}
			// The same in a browser whose V8 caches as soon as there is
			// optimized code (no quiet period): what the headers and the
			// loader allow once V8 hands the code over.
			progress("  a second browser with --js-flags=%s", *forced)
			fb, err := startBenchBrowser(bin, chromedp.Flag("js-flags", *forced))
			if err != nil {
				return err
			}
			defer fb.close()
			rep.Caching.ForcedJSFlags = *forced
			if rep.Caching.ForcedOrders, err = fb.visits(base, "/orders/", opt, 12*time.Second, progress); err != nil {
				return err
			}
			rep.Caching.Forced, err = fb.caching(base, experiments, progress)
			return err
		}},
		{"describe", "describe at 100 and 1,000 vs the polyfill's getTools", func() error { return b.describe(base, opt, rep) }},
		{"invoke", "no-op invoke vs the polyfill's executeTool", func() error { return b.invoke(base, opt, rep) }},
		{"observer", "a DOM text edit under each observer", func() error { return b.observer(base, opt, rep, poly) }},
		{"snapshot", "orders page: describe vs per-row tools vs ARIA snapshot", func() error { return b.snapshot(base, rep) }},
		{"firstcall", "native WebMCP: the first executeTool vs a minimal GOOS=js module and the polyfill", func() error { return b.firstCall(ctx, bin, base, mux, opt, rep) }},
	}
	ran := map[string]bool{}
	for _, s := range steps {
		if *only != "" && s.key != "isolation" && !slices.Contains(strings.Split(*only, ","), s.key) {
			continue
		}
		ran[s.key] = true
		progress("%s", s.name)
		if err := s.run(); err != nil {
			return fail("%s: %v", s.name, err)
		}
	}
	rep.Targets = benchTargets(rep, ran)

	rep.Machine.LoadEnd = loadAverage()
	svgPath, err := writeBenchBrowser(*out, rep, ran)
	if err != nil {
		return fail("%v", err)
	}
	printBenchBrowser(stdout, rep, ran)
	fmt.Fprintf(stdout, "\nwrote %s and %s\n", *out, svgPath)
	return 0
}

// benchMachine is the machine a report was measured on: its CPUs, and
// the load average (loadAverage) when the run started and when it ended.
type benchMachine struct {
	CPUs      int    `json:"cpus"`
	LoadStart string `json:"loadAverageStart"`
	LoadEnd   string `json:"loadAverageEnd"`
}

// startMachine is the machine as a run starts.
func startMachine() benchMachine {
	return benchMachine{CPUs: goruntime.NumCPU(), LoadStart: loadAverage()}
}

// loadAverage is the first three fields of /proc/loadavg ("" elsewhere):
// the figures of a loaded machine are slower, the ratios less so.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func defaultBenchCache() string { return userCache("bench-browser") }

// polyfillIIFE returns the polyfill's IIFE bundle: the given file, or the
// one npm installs into cacheDir (once; later runs reuse it). The bundle
// is found through the package's "./iife" export.
func polyfillIIFE(ctx context.Context, given, cacheDir string, progress func(string, ...any)) (file, version string, err error) {
	if given != "" {
		return given, "(given file)", nil
	}
	pkgDir, pkg, err := npmCached(ctx, cacheDir, polyfillPackage, polyfillVersion, nil, progress)
	if err != nil {
		return "", "", err
	}
	rel := "dist/index.iife.js"
	if ex, ok := pkg["exports"].(map[string]any); ok {
		if iife, ok := ex["./iife"].(map[string]any); ok {
			for _, k := range []string{"script", "default"} {
				if s, ok := iife[k].(string); ok {
					rel = s
					break
				}
			}
		}
	}
	file = filepath.Join(pkgDir, filepath.FromSlash(strings.TrimPrefix(rel, "./")))
	if _, err := os.Stat(file); err != nil {
		return "", "", fmt.Errorf("no IIFE bundle in %s: %w", pkgDir, err)
	}
	v, _ := pkg["version"].(string)
	return file, v, nil
}

// bbBrowser is the one Chromium of a run, with a profile directory of its
// own so that the code cache can be watched on disk.
type bbBrowser struct {
	ctx     context.Context
	profile string
	stop    []func()
}

func startBenchBrowser(bin string, extra ...chromedp.ExecAllocatorOption) (*bbBrowser, error) {
	profile, err := os.MkdirTemp("", "pling-bench-browser-")
	if err != nil {
		return nil, err
	}
	b := &bbBrowser{profile: profile}
	b.stop = append(b.stop, func() { os.RemoveAll(profile) })
	actx, acancel, err := plingcdp.NewAllocator(context.Background(), bin, append([]chromedp.ExecAllocatorOption{chromedp.UserDataDir(profile)}, extra...)...)
	if err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	b.stop = append(b.stop, acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	b.stop = append(b.stop, bcancel)
	b.ctx = bctx
	start, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stopOnTimeout := context.AfterFunc(start, func() {
		if start.Err() == context.DeadlineExceeded {
			acancel()
		}
	})
	err = chromedp.Do(bctx)
	stopOnTimeout()
	if err != nil {
		b.close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	return b, nil
}

func (b *bbBrowser) close() {
	for i := len(b.stop) - 1; i >= 0; i-- {
		b.stop[i]()
	}
}

// tab opens a new tab; with probe, the load probe runs in every document
// it loads before the page's scripts.
func (b *bbBrowser) tab(probe bool) (context.Context, func(), error) {
	tctx, cancel := chromedp.NewContext(b.ctx)
	if err := chromedp.Do(tctx); err != nil {
		cancel()
		return nil, nil, err
	}
	if probe {
		if _, err := chromedp.Call(tctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: benchLoadProbe}); err != nil {
			cancel()
			return nil, nil, err
		}
	}
	return tctx, cancel, nil
}

func navigate(tctx context.Context, url string) error {
	c, cancel := context.WithTimeout(tctx, time.Minute)
	defer cancel()
	return chromedp.Do(c, chromedp.Navigate(url))
}

func eval[T any](tctx context.Context, timeout time.Duration, expr string) (T, error) {
	c, cancel := context.WithTimeout(tctx, timeout)
	defer cancel()
	return chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// evalInto evaluates expr in the tab and decodes its value into v with
// encoding/json, whose field names match the harness's whatever their
// case.
func evalInto(tctx context.Context, timeout time.Duration, expr string, v any) error {
	raw, err := eval[json.RawMessage](tctx, timeout, expr)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// rowsURL is url for mode: "all" asks the page for every row
// (?rows=all), any other mode for its virtualized window.
func rowsURL(url, mode string) string {
	if mode == "all" {
		return url + "?rows=all"
	}
	return url
}

// open is a new tab on url with the harness installed.
func (b *bbBrowser) open(url string) (context.Context, func(), error) {
	tctx, cancel, err := b.tab(false)
	if err != nil {
		return nil, nil, err
	}
	if err := navigate(tctx, url); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("loading %s: %w", url, err)
	}
	if _, err := eval[bool](tctx, 30*time.Second, benchHarness); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("%s: %w", url, err)
	}
	return tctx, cancel, nil
}

func jsArgs(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (b *bbBrowser) isolation(base string, rep *bbReport) error {
	tctx, done, err := b.open(base + "/bench/blank.html")
	if err != nil {
		return err
	}
	defer done()
	if rep.CrossOriginIsolated, err = eval[bool](tctx, 10*time.Second, "self.crossOriginIsolated === true"); err != nil {
		return err
	}
	res, err := eval[float64](tctx, 10*time.Second, "__bench.resolution()")
	rep.TimerResolutionUs = res * 1000
	if err == nil && !rep.CrossOriginIsolated {
		err = errors.New("the page is not cross-origin isolated: performance.now() is coarse (100 µs)")
	}
	return err
}

func (b *bbBrowser) scripts(base string, o bbOptions, rep *bbReport) error {
	tctx, done, err := b.open(base + "/bench/blank.html")
	if err != nil {
		return err
	}
	defer done()
	type pair struct{ Load, Eval []float64 }
	res, err := eval[struct{ Shim, Poly pair }](tctx, o.timeout, fmt.Sprintf("__bench.scripts(%s)",
		jsArgs(map[string]any{"shim": "/pling/pling.js", "poly": "/bench/webmcp-polyfill.js", "warm": 5, "reps": max(o.reps/3, 20)})))
	if err != nil {
		return err
	}
	s := &rep.Scripts
	s.ShimLoad, s.PolyfillLoad = distOf(res.Shim.Load), distOf(res.Poly.Load)
	s.ShimEval, s.PolyfillEval = distOf(res.Shim.Eval), distOf(res.Poly.Eval)
	s.LoadRatio = ratio(s.ShimLoad.P50, s.PolyfillLoad.P50)
	s.EvalRatio = ratio(s.ShimEval.P50, s.PolyfillEval.P50)
	s.BrotliRatio = ratio(float64(s.Shim.Brotli), float64(s.Polyfill.Brotli))
	return nil
}

// codeCache counts the entries and bytes of the profile's WebAssembly
// code cache (Chromium's GeneratedCodeCache, "Code Cache/wasm").
func (b *bbBrowser) codeCache() (n int, size int64) {
	dir := filepath.Join(b.profile, "Default", "Code Cache", "wasm")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		name := d.Name()
		if name == "index" || strings.HasPrefix(name, "the-real-index") || strings.HasSuffix(filepath.Dir(p), "index-dir") {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n++
			size += info.Size()
		}
		return nil
	})
	return n, size
}

// visit opens url in a new tab, waits for its load, and times the first
// describe. With trace, the tab records trace events until done is
// called, which then sets the visit's CacheHit and CacheWritten. The tab
// stays open until done is called.
func (b *bbBrowser) visit(url string, trace bool) (*bbVisit, func(), error) {
	tctx, cancel, err := b.tab(true)
	if err != nil {
		return nil, nil, err
	}
	var tr *tracer
	if trace {
		if tr, err = startTrace(tctx); err != nil {
			cancel()
			return nil, nil, err
		}
	}
	if err := navigate(tctx, url); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("loading %s: %w", url, err)
	}
	v, err := eval[bbVisit](tctx, time.Minute, benchVisitMeasure)
	if err == nil && !v.OK {
		err = errors.New("the first describe failed")
	}
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("%s: %w", url, err)
	}
	done := func() {
		if tr != nil {
			names := tr.stop(tctx)
			v.CacheHit = names["v8.wasm.moduleCacheHit"] > 0
			v.CacheWritten = names["v8.wasm.cachedModule"] > 0
			v.Timer = tr.cachingTimer()
		}
		cancel()
	}
	return &v, done, nil
}
