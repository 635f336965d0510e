package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	plingcdp "github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/chromium"
	"github.com/pling-go/pling/internal/cliflags"
	"github.com/pling-go/pling/internal/demosite"
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
	Date    string `json:"date,omitempty"`
	Browser string `json:"browser"`
	Machine struct {
		CPUs      int    `json:"cpus"`
		LoadStart string `json:"loadAverageStart"` // /proc/loadavg: 1, 5, 15 minutes
		LoadEnd   string `json:"loadAverageEnd"`
	} `json:"machine"`
	V8                  string  `json:"v8"`
	Server              string  `json:"server"`
	CrossOriginIsolated bool    `json:"crossOriginIsolated"`
	TimerResolutionUs   float64 `json:"timerResolutionUs"`
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
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "pling-bench browser: "+format+"\n", a...)
		return 1
	}
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "bench-browser: "+format+"\n", a...) }

	rep := &bbReport{Date: reportDate(), Server: "pling serve handler (demosite), in-process (COOP same-origin, COEP require-corp)"}
	rep.Machine.CPUs, rep.Machine.LoadStart = goruntime.NumCPU(), loadAverage()
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

	module := demosite.Module()
	if *dist != "" {
		module = os.DirFS(*dist)
	}
	wasm, err := fs.ReadFile(module, "pling.wasm")
	if err != nil {
		return fail("%v (run make wasm)", err)
	}
	// The bench pages (and the polyfill) join the demo site, so the very
	// handler of pling serve serves them with the demo pages' headers.
	demo, err := benchDemo(demosite.Demo(), poly)
	if err != nil {
		return fail("%v", err)
	}
	progress("compressing the module (brotli %d, as pling serve does)", *quality)
	sctx, stopServer := context.WithCancel(ctx)
	defer stopServer()
	srv, err := demosite.New(sctx, module, demo, demosite.Options{Brotli: *quality,
		// The bench pages time inline script in same-origin iframes, which
		// the demo's policy forbids; they measure, they are not deployed.
		CSP: "frame-ancestors 'self'"})
	if err != nil {
		return fail("%v", err)
	}
	if missing := srv.Missing(); len(missing) > 0 {
		return fail("the module directory lacks %s (run make wasm)", strings.Join(missing, ", "))
	}
	<-srv.Upgraded()
	experiments := cachingExperiments()
	exp, err := newExperimentFiles(wasm, experiments)
	if err != nil {
		return fail("%v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/bench/wasm/", exp)
	mux.Handle("/", srv)

	rep.Scripts.ModuleBrotliQ = *quality
	for _, f := range []struct {
		fsys fs.FS
		name string
		s    *bbSizes
	}{{module, "pling.js", &rep.Scripts.Shim}, {demo, "bench/webmcp-polyfill.js", &rep.Scripts.Polyfill}, {module, "pling.wasm", &rep.Scripts.ModuleSizes}, {module, "wasm_exec.js", &rep.Scripts.WasmExecSizes}} {
		b, err := fs.ReadFile(f.fsys, f.name)
		if err != nil {
			return fail("%v", err)
		}
		*f.s = compressedSizes(b, *quality)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail("%v", err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String()

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

	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return fail("%v", err)
	}
	js, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(*out, append(js, '\n'), 0o644); err != nil {
		return fail("%v", err)
	}
	stem := strings.TrimSuffix(*out, filepath.Ext(*out))
	if ran["snapshot"] {
		// The ARIA snapshots the byte counts are of, for a reader to see.
		for name, pg := range map[string]bbSnapshotPage{"virtualized": rep.Snapshot.Virtualized, "all-rows": rep.Snapshot.AllRows} {
			if err := os.WriteFile(stem+".aria-"+name+".txt", []byte(pg.AXText), 0o644); err != nil {
				return fail("%v", err)
			}
		}
	}
	svgPath := stem + ".svg"
	sf, err := os.Create(svgPath)
	if err != nil {
		return fail("%v", err)
	}
	err = writeBenchSVG(sf, fmt.Sprintf("pling-bench browser: %s, figure ÷ target", rep.Browser), rep.Targets)
	if cerr := sf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail("%v", err)
	}
	rep.Machine.LoadEnd = loadAverage()
	printBenchBrowser(stdout, rep, ran)
	fmt.Fprintf(stdout, "\nwrote %s and %s\n", *out, svgPath)
	return 0
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

// tracer collects the names of a tab's trace events: the few that say
// what the code cache did.
type tracer struct {
	mu    sync.Mutex
	names map[string]int
	done  chan struct{}
	// published are the top-tier publications (wasm.OnFinishedUnits),
	// chunks the caching events, timer the runs of V8's caching task:
	// trace timestamps in µs.
	published, chunks []float64
	timer             []timerRun
}

type timerRun struct{ ts, delayUs float64 }

// cachingTimer reads V8's caching timer out of a visit's trace.
func (t *tracer) cachingTimer() *bbCachingTimer {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.published) == 0 {
		return nil
	}
	pub := slices.Sorted(slices.Values(t.published))
	runs := slices.SortedFunc(slices.Values(t.timer), func(a, b timerRun) int { return cmp.Compare(a.ts, b.ts) })
	c := &bbCachingTimer{TopTierBatches: len(pub), TopTierSpanMs: (pub[len(pub)-1] - pub[0]) / 1000, Runs: len(runs), Chunks: len(t.chunks)}
	if len(runs) == 0 {
		return c
	}
	first := runs[0]
	c.FirstRunMs = (first.ts - pub[0]) / 1000
	c.FirstDelayMs = first.delayUs / 1000
	for _, r := range runs[1:] {
		c.LaterDelaysMs = append(c.LaterDelaysMs, r.delayUs/1000)
	}
	// The timer's mark: when it was posted, moved by every publication
	// until the first run.
	mark := first.ts - first.delayUs
	for _, p := range pub {
		if p <= first.ts && p > mark {
			mark = p
		}
	}
	if left := (mark + first.delayUs - first.ts) / 1000; left >= 0.5 {
		c.RearmS = math.Ceil(left) // milliseconds, taken as seconds
	}
	return c
}

func startTrace(tctx context.Context) (*tracer, error) {
	t := &tracer{names: map[string]int{}, done: make(chan struct{})}
	var once sync.Once
	err := chromedp.Listen(tctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			t.mu.Lock()
			for _, raw := range e.Value {
				var x struct {
					Name string  `json:"name"`
					TS   float64 `json:"ts"`
					Args struct {
						Task struct {
							DelayUs float64 `json:"task_delay_us"`
						} `json:"chrome_task_annotator"`
						Func string `json:"src_func"`
					} `json:"args"`
				}
				if json.Unmarshal([]byte(raw), &x) != nil {
					continue
				}
				switch {
				case x.Name == "ThreadPool_RunTask":
					if strings.Contains(x.Args.Func, "CompilationStateImpl::TriggerOutstandingCallbacks") || strings.Contains(x.Args.Func, "CompilationStateImpl::TriggerCachingAfterTimeout") {
						t.timer = append(t.timer, timerRun{x.TS, x.Args.Task.DelayUs})
					}
				case x.Name == "wasm.OnFinishedUnits":
					t.published = append(t.published, x.TS)
				case x.Name == "wasm.CompilationChunkFinished":
					t.chunks = append(t.chunks, x.TS)
				}
				if strings.Contains(x.Name, "wasm") {
					t.names[x.Name]++
				}
			}
			t.mu.Unlock()
		case *tracing.EventTracingComplete:
			once.Do(func() { close(t.done) })
		}
	})
	if err != nil {
		return nil, err
	}
	_, err = chromedp.Call(tctx, tracing.Start, tracing.StartParams{TraceConfig: &tracing.TraceConfig{
		IncludedCategories: []string{"v8.wasm", "disabled-by-default-v8.wasm.detailed", "disabled-by-default-devtools.timeline", "toplevel"},
	}})
	return t, err
}

func (t *tracer) stop(tctx context.Context) map[string]int {
	c, cancel := context.WithTimeout(tctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Call(c, tracing.End, cdp.Empty{}); err == nil {
		select {
		case <-t.done:
		case <-c.Done():
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.names)
}

// waitCodeCache waits until the code cache holds more than before entries
// (or grows), up to limit, and reports how long that took (-1: never).
func (b *bbBrowser) waitCodeCache(before int, beforeSize int64, limit time.Duration) float64 {
	t0 := time.Now()
	for time.Since(t0) < limit {
		if n, s := b.codeCache(); n > before || (n == before && s > beforeSize && n > 0) {
			return float64(time.Since(t0).Microseconds()) / 1000
		}
		time.Sleep(50 * time.Millisecond)
	}
	return -1
}

// clearCache clears the HTTP cache and, with it, the code caches
// (Network.clearBrowserCache).
func (b *bbBrowser) clearCache() error {
	tctx, done, err := b.tab(false)
	if err != nil {
		return err
	}
	defer done()
	c, cancel := context.WithTimeout(tctx, 30*time.Second)
	defer cancel()
	_, err = chromedp.Call(c, network.ClearBrowserCache, cdp.Empty{})
	return err
}

// visits times the agent's first describe on a page: cold (a fresh
// profile, then after clearing the caches), on a second visit in a new
// tab, and on reloads of one tab. The first visit stays open up to wait
// for the compiled module to reach the code cache.
func (b *bbBrowser) visits(base, page string, o bbOptions, wait time.Duration, progress func(string, ...any)) (*bbVisits, error) {
	v := &bbVisits{Page: page, CacheWaitMs: float64(wait.Milliseconds())}
	url := base + page
	n0, s0 := b.codeCache()
	first, done, err := b.visit(url, false)
	if err != nil {
		return nil, err
	}
	v.ColdFirst = *first
	v.CacheWrittenMs = b.waitCodeCache(n0, s0, wait)
	if v.CacheWrittenMs >= 0 {
		time.Sleep(500 * time.Millisecond) // let the rest of the write land
	}
	_, v.CodeCacheBytes = b.codeCache()
	done()
	written := "not within " + wait.String()
	if v.CacheWrittenMs >= 0 {
		written = fmt.Sprintf("%.0f ms after the describe, %d bytes", v.CacheWrittenMs, v.CodeCacheBytes)
	}
	progress("  cold %s; compiled module in the code cache: %s", fmtMs(first.Ms), written)

	for i := 0; i < o.visits; i++ {
		sv, done, err := b.visit(url, false)
		if err != nil {
			return nil, err
		}
		done()
		v.Second = append(v.Second, *sv)
	}
	sv, done, err := b.visit(url, true)
	if err != nil {
		return nil, err
	}
	done()
	v.SecondTraced = *sv

	tctx, cancel, err := b.tab(true)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if err := navigate(tctx, url); err != nil {
		return nil, err
	}
	if _, err := eval[bbVisit](tctx, time.Minute, benchVisitMeasure); err != nil {
		return nil, err
	}
	for i := 0; i < o.visits; i++ {
		c, cc := context.WithTimeout(tctx, time.Minute)
		err := chromedp.Do(c, chromedp.Reload())
		cc()
		if err != nil {
			return nil, err
		}
		rv, err := eval[bbVisit](tctx, time.Minute, benchVisitMeasure)
		if err != nil {
			return nil, err
		}
		v.Reload = append(v.Reload, rv)
	}
	cancel()

	v.Cold = []bbVisit{*first}
	for i := 1; i < o.visits; i++ {
		if err := b.clearCache(); err != nil {
			return nil, err
		}
		if n, _ := b.codeCache(); n > 0 {
			progress("  note: Network.clearBrowserCache left %d code cache entries", n)
		}
		cv, done, err := b.visit(url, false)
		if err != nil {
			return nil, err
		}
		done()
		v.Cold = append(v.Cold, *cv)
	}
	ms := func(vs []bbVisit) []float64 {
		out := make([]float64, len(vs))
		for i, x := range vs {
			out[i] = x.Ms
		}
		return out
	}
	v.ColdMs, v.SecondMs, v.ReloadMs = distOf(ms(v.Cold)), distOf(ms(v.Second)), distOf(ms(v.Reload))

	// The floor, in a page of the same origin (the module is in its HTTP
	// cache now).
	fctx, fdone, err := b.open(base + "/bench/blank.html")
	if err != nil {
		return nil, err
	}
	var fl struct {
		Reads     []float64
		CompileMs float64
		Starts    []float64
		Bytes     int
	}
	raw, err := eval[json.RawMessage](fctx, 5*time.Minute, "__bench.floor("+jsArgs(map[string]any{
		"exec": "/pling/wasm_exec.js", "wasm": "/pling/pling.wasm", "reads": 7, "starts": 4})+")")
	fdone()
	if err == nil {
		err = json.Unmarshal(raw, &fl)
	}
	if err != nil {
		return nil, fmt.Errorf("the cold path's floor: %w", err)
	}
	v.Floor = &bbFloor{Bytes: fl.Bytes, CacheReadMs: distOf(fl.Reads), CompileMs: fl.CompileMs, FirstStart: fl.Starts[0], WarmStart: distOf(fl.Starts[1:])}
	v.SecondOverCold = ratio(v.SecondMs.P50, v.ColdMs.P50)
	v.ReloadOverCold = ratio(v.ReloadMs.P50, v.ColdMs.P50)
	return v, nil
}

// cachingExperiment is one way of serving the module: its own URL (and
// bytes), its Cache-Control, streaming or not, and how long the first
// visit stays open.
type cachingExperiment struct {
	name, cache string
	streaming   bool
	stay        time.Duration // 0: until the code cache is written (at most 15 s)
}

func (e cachingExperiment) url() string { return "/bench/wasm/" + e.name + "/pling.wasm" }

func cachingExperiments() []cachingExperiment {
	return []cachingExperiment{
		{name: "max-age", cache: "public, max-age=300", streaming: true},
		{name: "no-cache", cache: "no-cache", streaming: true},
		{name: "no-store", cache: "no-store", streaming: true},
		{name: "arraybuffer", cache: "public, max-age=300", streaming: false},
		{name: "short-visit", cache: "public, max-age=300", streaming: true, stay: 200 * time.Millisecond},
	}
}

// caching runs the experiments: each module URL visited twice in new
// tabs, both visits traced (did V8 serialize the module; did Blink find it
// in the code cache).
func (b *bbBrowser) caching(base string, es []cachingExperiment, progress func(string, ...any)) ([]bbCaching, error) {
	var out []bbCaching
	for _, e := range es {
		url := base + "/bench/visit.html?wasm=" + e.url()
		if !e.streaming {
			url += "&stream=0"
		}
		r := bbCaching{Name: e.name, CacheControl: e.cache, Streaming: e.streaming}
		n0, s0 := b.codeCache()
		first, done, err := b.visit(url, true)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		if e.stay > 0 {
			time.Sleep(e.stay)
		} else if b.waitCodeCache(n0, s0, 10*time.Second) >= 0 {
			time.Sleep(300 * time.Millisecond)
		}
		r.StayMs = float64(time.Since(t0).Milliseconds())
		done()
		time.Sleep(300 * time.Millisecond) // let a write in flight land
		n1, s1 := b.codeCache()
		r.First = *first
		r.CacheWritten = first.CacheWritten || n1 > n0 || s1 > s0
		second, done, err := b.visit(url, true)
		if err != nil {
			return nil, err
		}
		done()
		r.Second, r.HitOnSecond = *second, second.CacheHit
		r.SecondOverFst = ratio(second.Ms, first.Ms)
		progress("  %-12s %-20s first %s, second %s (%.2f×), written %v, hit %v", e.name, e.cache, fmtMs(first.Ms), fmtMs(second.Ms), r.SecondOverFst, r.CacheWritten, r.HitOnSecond)
		out = append(out, r)
	}
	return out, nil
}

type bbDescribeResult struct {
	Samples      []float64
	Capabilities int
	Truncated    bool
	Bytes        int
}

func (b *bbBrowser) describe(base string, o bbOptions, rep *bbReport) error {
	d := &rep.Describe
	run := func(url, expr string, into any) error {
		tctx, done, err := b.open(base + url)
		if err != nil {
			return err
		}
		defer done()
		raw, err := eval[json.RawMessage](tctx, o.timeout, expr)
		if err != nil {
			return fmt.Errorf("%s: %w", url, err)
		}
		return json.Unmarshal(raw, into)
	}
	arg := func(reps int) string { return jsArgs(map[string]int{"warm": 20, "reps": reps}) }
	var r100, r1000 bbDescribeResult
	if err := run("/bench/caps.html?n=100", "__bench.describe("+arg(o.reps)+")", &r100); err != nil {
		return err
	}
	if err := run("/bench/caps.html?n=1000", "__bench.describe("+arg(max(o.reps/3, 20))+")", &r1000); err != nil {
		return err
	}
	d.Ours100, d.Ours1000 = distOf(r100.Samples), distOf(r1000.Samples)
	d.Ours1000Caps, d.Ours1000Trunc, d.Ours1000Bytes = r1000.Capabilities, r1000.Truncated, r1000.Bytes
	if r1000.Capabilities != 1000 || r1000.Truncated {
		return fmt.Errorf("describe at 1,000 listed %d capabilities (truncated %v)", r1000.Capabilities, r1000.Truncated)
	}
	var p100, p1000 struct {
		Samples []float64
		Tools   int
		Bytes   int
	}
	if err := run("/bench/poly.html?n=100", "__bench.getTools("+arg(o.reps)+")", &p100); err != nil {
		return err
	}
	tctx, done, err := b.open(base + "/bench/poly.html?n=1000")
	if err != nil {
		return err
	}
	if d.PolyRegister, err = eval[float64](tctx, o.timeout, "window.polyReady"); err != nil {
		done()
		return err
	}
	raw, err := eval[json.RawMessage](tctx, o.timeout, "__bench.getTools("+arg(max(o.reps/3, 20))+")")
	if err == nil {
		err = json.Unmarshal(raw, &p1000)
	}
	var t0 []float64
	if err == nil {
		t0, err = eval[[]float64](tctx, o.timeout, "__bench.timeout0("+arg(o.reps)+")")
	}
	done()
	if err != nil {
		return err
	}
	d.Poly100, d.Poly1000, d.Timeout0 = distOf(p100.Samples), distOf(p1000.Samples), distOf(t0)
	d.Poly1000Tools, d.Poly1000Bytes = p1000.Tools, p1000.Bytes
	d.Ratio1000 = ratio(d.Ours1000.P50, d.Poly1000.P50)

	tctx, done, err = b.open(base + "/bench/caps.html?n=0")
	if err != nil {
		return err
	}
	defer done()
	if d.OursRegister, err = eval[float64](tctx, o.timeout, `__bench.declare({n: 1000})`); err != nil {
		return err
	}
	d.RegisterRatio = ratio(d.OursRegister, d.PolyRegister)
	return nil
}

func (b *bbBrowser) invoke(base string, o bbOptions, rep *bbReport) error {
	arg := jsArgs(map[string]int{"warm": 50, "reps": o.reps * 3})
	get := func(url, fn string) ([]float64, error) {
		tctx, done, err := b.open(base + url)
		if err != nil {
			return nil, err
		}
		defer done()
		return eval[[]float64](tctx, o.timeout, "__bench."+fn+"("+arg+")")
	}
	ours, err := get("/bench/caps.html?n=0&noop", "invoke")
	if err != nil {
		return err
	}
	theirs, err := get("/bench/poly.html?n=0&noop", "execute")
	if err != nil {
		return err
	}
	rep.Invoke.Ours, rep.Invoke.Polyfill = distOf(ours), distOf(theirs)
	rep.Invoke.Ratio = ratio(rep.Invoke.Ours.P50, rep.Invoke.Polyfill.P50)
	return nil
}

func (b *bbBrowser) observer(base string, o bbOptions, rep *bbReport, poly []byte) error {
	ob := &rep.Observer
	// What the polyfill observes is read from its bundle, not assumed.
	src := string(poly)
	ob.PolyfillHasObserver = strings.Contains(src, "new MutationObserver")
	if strings.Contains(src, "characterData:!0") && strings.Contains(src, "subtree:!0") {
		ob.PolyfillObserves = "the whole document: attributes, characterData, childList, subtree; every mutation rescans querySelectorAll(\"*\") for tool forms"
	}
	ob.Pages = map[string]map[string]map[string]bbEdits{}
	for _, kind := range []string{"textContent", "data"} {
		ob.Pages[kind] = map[string]map[string]bbEdits{}
		for _, mode := range []string{"virtualized", "all"} {
			ob.Pages[kind][mode] = map[string]bbEdits{}
			for _, v := range []string{"pling", "polyfill", "none", "empty"} {
				url := base + "/bench/orders-" + v + ".html"
				if mode == "all" {
					url += "?rows=all"
				}
				tctx, done, err := b.open(url)
				if err != nil {
					return err
				}
				var res struct {
					Samples  []float64
					Elements int
					Rows     int
				}
				raw, err := eval[json.RawMessage](tctx, o.timeout, "__bench.edits("+jsArgs(map[string]any{"kind": kind, "warm": 3, "reps": max(o.reps/5, 20), "batch": 50})+")")
				done()
				if err == nil {
					err = json.Unmarshal(raw, &res)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", url, err)
				}
				ob.Pages[kind][mode][v] = bbEdits{Ms: distOf(res.Samples), Elements: res.Elements, Rows: res.Rows}
			}
		}
	}
	p := func(kind, mode, v string) float64 { return ob.Pages[kind][mode][v].Ms.P50 }
	ob.Ratio = ratio(p("textContent", "virtualized", "pling"), p("textContent", "virtualized", "polyfill"))
	ob.RatioAllRows = ratio(p("textContent", "all", "pling"), p("textContent", "all", "polyfill"))
	ob.RatioData = ratio(p("data", "virtualized", "pling"), p("data", "virtualized", "polyfill"))
	ob.RatioDataAll = ratio(p("data", "all", "pling"), p("data", "all", "polyfill"))
	ob.OverheadRatio = ratio(max(p("textContent", "virtualized", "pling")-p("textContent", "virtualized", "none"), 0),
		p("textContent", "virtualized", "polyfill")-p("textContent", "virtualized", "none"))
	return nil
}

func (b *bbBrowser) snapshot(base string, rep *bbReport) error {
	s := &rep.Snapshot
	for _, mode := range []string{"virtualized", "all"} {
		url := base + "/orders/"
		if mode == "all" {
			url += "?rows=all"
		}
		tctx, done, err := b.open(url)
		if err != nil {
			return err
		}
		var d struct {
			Bytes        int
			Capabilities int
			Folds        []bbFold
			DomRows      int
		}
		raw, err := eval[json.RawMessage](tctx, time.Minute, "__bench.describeBytes()")
		if err == nil {
			err = json.Unmarshal(raw, &d)
		}
		if err == nil && mode == "all" {
			var rt struct{ Tools, Items, Bytes int }
			raw, err = eval[json.RawMessage](tctx, time.Minute, "__bench.rowTools()")
			if err == nil {
				err = json.Unmarshal(raw, &rt)
			}
			s.PerRowTools, s.PerRowBytes = rt.Tools, rt.Bytes
		}
		var ax accessibility.GetFullAXTreeResult
		if err == nil {
			c, cancel := context.WithTimeout(tctx, time.Minute)
			ax, err = chromedp.Call(c, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
			cancel()
		}
		done()
		if err != nil {
			return fmt.Errorf("%s: %w", url, err)
		}
		text, rows := axSnapshot(ax.Nodes)
		rawAX, _ := json.Marshal(ax.Nodes)
		pg := bbSnapshotPage{AXText: text, DescribeBytes: d.Bytes, AXBytes: len(text), AXRawBytes: len(rawAX), AXRows: rows, DOMRows: d.DomRows, Folds: d.Folds}
		if mode == "all" {
			s.AllRows = pg
		} else {
			s.Virtualized = pg
		}
	}
	s.RatioAllRows = ratio(float64(s.AllRows.DescribeBytes), float64(s.AllRows.AXBytes))
	s.RatioVirtual = ratio(float64(s.Virtualized.DescribeBytes), float64(s.Virtualized.AXBytes))
	s.RatioPerRow = ratio(float64(s.AllRows.DescribeBytes), float64(s.PerRowBytes))
	return nil
}

// benchTargets are the targets, each as figure and limit.
func benchTargets(r *bbReport, ran map[string]bool) []bbTarget {
	s, v, d, o, sn := r.Scripts, r.Visits, r.Describe, r.Observer, r.Snapshot
	step := []string{"scripts", "scripts", "visits", "visits", "describe", "invoke", "observer", "snapshot"}
	all := []bbTarget{
		target("script before an agent (brotli)", float64(s.Shim.Brotli), 7*1024, "B",
			fmt.Sprintf("pling.js %d B brotli (polyfill %d B, %.2f×)", s.Shim.Brotli, s.Polyfill.Brotli, s.BrotliRatio)),
		target("shim load ÷ polyfill load", s.LoadRatio, 1, "×",
			fmt.Sprintf("p50 %s vs %s", fmtMs(s.ShimLoad.P50), fmtMs(s.PolyfillLoad.P50))),
		target("first describe, cold page", v.ColdMs.P50, 400, "ms", fmt.Sprintf("p50 of %d cold visits; the very first %s", v.ColdMs.N, fmtMs(v.ColdFirst.Ms))),
		target("first describe, second visit", v.SecondMs.P50, 150, "ms", fmt.Sprintf("p50 of %d new-tab visits; reload p50 %s", v.SecondMs.N, fmtMs(v.ReloadMs.P50))),
		target("describe@1000 ÷ getTools@1000", d.Ratio1000, 1, "×", fmt.Sprintf("p50 %s vs %s", fmtMs(d.Ours1000.P50), fmtMs(d.Poly1000.P50))),
		target("no-op invoke round trip", r.Invoke.Ours.P50, 0.3, "ms", fmt.Sprintf("p50; polyfill executeTool %s", fmtMs(r.Invoke.Polyfill.P50))),
		target("DOM edit: ours ÷ polyfill observer", o.Ratio, 1.0/20, "×", fmt.Sprintf("textContent edit, page as shipped: p50 %s vs %s; all rows %.3f×; text-node edits %.3f× / %.3f×",
			fmtMs(o.Pages["textContent"]["virtualized"]["pling"].Ms.P50), fmtMs(o.Pages["textContent"]["virtualized"]["polyfill"].Ms.P50), o.RatioAllRows, o.RatioData, o.RatioDataAll)),
		target("describe ÷ ARIA snapshot (all rows)", sn.RatioAllRows, 1.0/5, "×", fmt.Sprintf("%d B vs %d B", sn.AllRows.DescribeBytes, sn.AllRows.AXBytes)),
	}
	var out []bbTarget
	for i, t := range all {
		if ran[step[i]] {
			out = append(out, t)
		}
	}
	if f := r.FirstCall; ran["firstcall"] && f != nil {
		out = append(out,
			target("first executeTool ÷ minimal GOOS=js module", f.RatioMinimal, 1.5, "×", fmt.Sprintf("native WebMCP, cold: p50 %s vs %s", fmtMs(f.Ours.P50), fmtMs(f.Minimal.P50))),
			target("first executeTool ÷ polyfill load+executeTool", f.RatioPoly, 2, "×", fmt.Sprintf("p50 %s vs %s", fmtMs(f.Ours.P50), fmtMs(f.Polyfill.P50))),
			target("a visit before the first call (KB, no module)", f.BeforeCallBytes.P50/1000, 60, "KB", fmt.Sprintf("p50 %.0f B fetched, no .wasm (native WebMCP, tools registered)", f.BeforeCallBytes.P50)))
	}
	return out
}

// benchStepNames are the steps --only can name.
var benchStepNames = []string{"scripts", "visits", "caching", "describe", "invoke", "observer", "snapshot", "firstcall"}

func printBenchBrowser(w io.Writer, r *bbReport, ran map[string]bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "%s, V8 %s, %d CPUs (load average %s at the start, %s at the end)\n", r.Browser, r.V8, r.Machine.CPUs, r.Machine.LoadStart, r.Machine.LoadEnd)
	fmt.Fprintf(tw, "crossOriginIsolated %v, performance.now() step %.0f µs; polyfill %s@%s\n\n", r.CrossOriginIsolated, r.TimerResolutionUs, r.Polyfill.Package, r.Polyfill.Version)

	if ran["scripts"] {
		s := r.Scripts
		fmt.Fprintln(tw, "1. script before an agent\traw\tgzip\tbrotli\tload p50\tspread\tevaluate p50\tspread")
		fmt.Fprintf(tw, "pling.js\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", s.Shim.Raw, s.Shim.Gzip, s.Shim.Brotli, fmtMs(s.ShimLoad.P50), s.ShimLoad.spread(), fmtMs(s.ShimEval.P50), s.ShimEval.spread())
		fmt.Fprintf(tw, "%s IIFE\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", polyfillPackage, s.Polyfill.Raw, s.Polyfill.Gzip, s.Polyfill.Brotli, fmtMs(s.PolyfillLoad.P50), s.PolyfillLoad.spread(), fmtMs(s.PolyfillEval.P50), s.PolyfillEval.spread())
		fmt.Fprintf(tw, "shim ÷ polyfill\t%.2f×\t%.2f×\t%.2f×\t%.2f×\t\t%.2f×\n", ratio(float64(s.Shim.Raw), float64(s.Polyfill.Raw)), ratio(float64(s.Shim.Gzip), float64(s.Polyfill.Gzip)), s.BrotliRatio, s.LoadRatio, s.EvalRatio)
		if len(s.PageScripts) > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(s.PageScripts)) {
				parts = append(parts, fmt.Sprintf("%s %d B", k, s.PageScripts[k]))
			}
			fmt.Fprintf(tw, "(/orders/ fetched from /pling/ before an agent arrived, bytes on the wire: %s)\n", strings.Join(parts, ", "))
		}
		fmt.Fprintf(tw, "(when an agent arrives: wasm_exec.js %d B brotli, pling.wasm %d B brotli)\n\n", s.WasmExecSizes.Brotli, s.ModuleSizes.Brotli)
	}

	if ran["visits"] {
		printVisits(tw, "2. first describe on /orders/ (default flags)", &r.Visits)
	}
	if ran["caching"] {
		printCaching(tw, "   caching experiment (default flags)", r.Caching.Default)
		if r.Caching.ForcedOrders != nil {
			printVisits(tw, "   first describe on /orders/ with --js-flags="+r.Caching.ForcedJSFlags, r.Caching.ForcedOrders)
			printCaching(tw, "   caching experiment (--js-flags="+r.Caching.ForcedJSFlags+")", r.Caching.Forced)
		}
	}

	if ran["describe"] {
		d := r.Describe
		fmt.Fprintln(tw, "3. listing what an agent may do\tp50\tspread\tbytes\t× polyfill")
		fmt.Fprintf(tw, "pling describe, 100 capabilities\t%s\t%s\t\t%.2f×\n", fmtMs(d.Ours100.P50), d.Ours100.spread(), ratio(d.Ours100.P50, d.Poly100.P50))
		fmt.Fprintf(tw, "polyfill getTools(), 100 tools\t%s\t%s\t\t1\n", fmtMs(d.Poly100.P50), d.Poly100.spread())
		fmt.Fprintf(tw, "pling describe, 1,000 capabilities\t%s\t%s\t%d\t%.2f×\n", fmtMs(d.Ours1000.P50), d.Ours1000.spread(), d.Ours1000Bytes, d.Ratio1000)
		fmt.Fprintf(tw, "polyfill getTools(), 1,000 tools\t%s\t%s\t%d\t1\n", fmtMs(d.Poly1000.P50), d.Poly1000.spread(), d.Poly1000Bytes)
		fmt.Fprintf(tw, "(each call starts in a fresh task; the floor under getTools, one setTimeout(0): %s)\n", fmtMs(d.Timeout0.P50))
		fmt.Fprintf(tw, "declaring 1,000 on a started page: pling.action %s vs registerTool (Promise.all) %s\t\t\t\t%.2f×\n\n", fmtMs(d.OursRegister), fmtMs(d.PolyRegister), d.RegisterRatio)
	}

	if ran["firstcall"] && r.FirstCall != nil {
		f := r.FirstCall
		fmt.Fprintln(tw, "native WebMCP, first executeTool (cold)\tp50\tspread")
		fmt.Fprintf(tw, "pling: the call loads the module\t%s\t%s\n", fmtMs(f.Ours.P50), f.Ours.spread())
		fmt.Fprintf(tw, "a minimal GOOS=js module, one call (%d B)\t%s\t%s\n", f.MinimalBytes, fmtMs(f.Minimal.P50), f.Minimal.spread())
		fmt.Fprintf(tw, "%s: load, register, executeTool\t%s\t%s\n", polyfillPackage, fmtMs(f.Polyfill.P50), f.Polyfill.spread())
		fmt.Fprintf(tw, "pling ÷ minimal (target ≤ 1.5×)\t%.2f×\n", f.RatioMinimal)
		fmt.Fprintf(tw, "pling ÷ polyfill (target ≤ 2×)\t%.2f×\n", f.RatioPoly)
		fmt.Fprintf(tw, "fetched before the first call, no module (target ≤ 60 KB)\t%.0f B\tp10–p90 %.0f–%.0f B\n\n", f.BeforeCallBytes.P50, f.BeforeCallBytes.P10, f.BeforeCallBytes.P90)
	}
	if ran["invoke"] {
		fmt.Fprintln(tw, "4. no-op call round trip\tp50\tspread")
		fmt.Fprintf(tw, "pling.surface.handle invoke\t%s\t%s\n", fmtMs(r.Invoke.Ours.P50), r.Invoke.Ours.spread())
		fmt.Fprintf(tw, "polyfill executeTool\t%s\t%s\n", fmtMs(r.Invoke.Polyfill.P50), r.Invoke.Polyfill.spread())
		fmt.Fprintf(tw, "ours ÷ polyfill\t%.2f×\n\n", r.Invoke.Ratio)
	}

	if ran["observer"] {
		o := r.Observer
		fmt.Fprintln(tw, "5. one DOM text edit, orders page\tours (markup observer)\tpolyfill (form observer)\tno observer\tempty observer, our options\tours ÷ polyfill\telements")
		for _, kind := range []string{"textContent", "data"} {
			for _, mode := range []string{"virtualized", "all"} {
				p := o.Pages[kind][mode]
				fmt.Fprintf(tw, "%s edit, %s (%d rows in the DOM)\t%s\t%s\t%s\t%s\t%.3g×\t%d\n", kind, mode, p["pling"].Rows, fmtMs(p["pling"].Ms.P50), fmtMs(p["polyfill"].Ms.P50), fmtMs(p["none"].Ms.P50),
					fmtMs(p["empty"].Ms.P50), ratio(p["pling"].Ms.P50, p["polyfill"].Ms.P50), p["pling"].Elements)
			}
		}
		fmt.Fprintf(tw, "(the polyfill observes %s)\n\n", o.PolyfillObserves)
	}

	if ran["snapshot"] {
		sn := r.Snapshot
		fmt.Fprintln(tw, "6. what an agent reads of /orders/\tbytes\trows reached\t× describe")
		fmt.Fprintf(tw, "pling describe (folded)\t%d\t%s\t1\n", sn.AllRows.DescribeBytes, foldReach(sn.AllRows.Folds))
		fmt.Fprintf(tw, "one tool per row and action\t%d\t%d tools\t%.1f×\n", sn.PerRowBytes, sn.PerRowTools, ratio(float64(sn.PerRowBytes), float64(sn.AllRows.DescribeBytes)))
		fmt.Fprintf(tw, "ARIA snapshot, all rows in the DOM\t%d\t%d\t%.1f×\n", sn.AllRows.AXBytes, sn.AllRows.AXRows, ratio(float64(sn.AllRows.AXBytes), float64(sn.AllRows.DescribeBytes)))
		fmt.Fprintf(tw, "ARIA snapshot, virtualized\t%d\t%d\t%.1f×\n", sn.Virtualized.AXBytes, sn.Virtualized.AXRows, ratio(float64(sn.Virtualized.AXBytes), float64(sn.Virtualized.DescribeBytes)))
		fmt.Fprintf(tw, "(CDP getFullAXTree JSON: all rows %d B, virtualized %d B; the virtualized page's describe is %d B)\n\n", sn.AllRows.AXRawBytes, sn.Virtualized.AXRawBytes, sn.Virtualized.DescribeBytes)
	}

	fmt.Fprintln(tw, "target\tfigure\tlimit\t÷ limit\tverdict\t")
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "%s\t%s %s\t%s %s\t%.3g\t%s\t%s\n", t.Name, fmtNum(t.Value), t.Unit, fmtNum(t.Limit), t.Unit, t.Value/t.Limit, t.verdict(), t.Detail)
	}
}

func printVisits(tw io.Writer, title string, v *bbVisits) {
	fmt.Fprintf(tw, "%s\tp50\tspread\twasm_exec.js\tfetch+compile\tGo start\tinit+describe\t× cold\n", title)
	row := func(name string, d bbDist, vs []bbVisit) {
		var l, c, gs, fc []float64
		for _, x := range vs {
			l, c, gs, fc = append(l, x.LoaderMs), append(c, x.CompileMs), append(gs, x.GoStartMs), append(fc, x.FirstCallMs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f×\n", name, fmtMs(d.P50), d.spread(), fmtMs(distOf(l).P50), fmtMs(distOf(c).P50), fmtMs(distOf(gs).P50), fmtMs(distOf(fc).P50), ratio(d.P50, v.ColdMs.P50))
	}
	row(fmt.Sprintf("cold (fresh profile, then caches cleared), n=%d", v.ColdMs.N), v.ColdMs, v.Cold)
	row(fmt.Sprintf("second visit, new tab, n=%d", v.SecondMs.N), v.SecondMs, v.Second)
	row(fmt.Sprintf("second visit, reload, n=%d", v.ReloadMs.N), v.ReloadMs, v.Reload)
	written := fmt.Sprintf("not within %.0f s of the first describe", v.CacheWaitMs/1000)
	if v.CacheWrittenMs >= 0 {
		written = fmt.Sprintf("%.0f ms after the first describe (%d B on disk)", v.CacheWrittenMs, v.CodeCacheBytes)
	}
	fmt.Fprintf(tw, "(compiled module in the code cache: %s; a traced second visit: cache hit %v)\n", written, v.SecondTraced.CacheHit)
	if f := v.Floor; f != nil {
		fmt.Fprintf(tw, "(the floor, in one page: reading the %d B module from the HTTP cache %s; compiling it %s; starting Go on it %s the first time, %s once compiled)\n",
			f.Bytes, fmtMs(f.CacheReadMs.P50), fmtMs(f.CompileMs), fmtMs(f.FirstStart), fmtMs(f.WarmStart.P50))
	}
	fmt.Fprintln(tw)
}

func printCaching(tw io.Writer, title string, cs []bbCaching) {
	fmt.Fprintf(tw, "%s\tCache-Control\tstreaming\tfirst\tsecond\tsecond ÷ first\twritten\thit on second\tV8 caching timer (first visit)\n", title)
	for _, c := range cs {
		fmt.Fprintf(tw, "   %s (stayed %.1f s)\t%s\t%v\t%s\t%s\t%.2f×\t%v\t%v\t%s\n", c.Name, c.StayMs/1000, c.CacheControl, c.Streaming, fmtMs(c.First.Ms), fmtMs(c.Second.Ms), c.SecondOverFst, c.CacheWritten, c.HitOnSecond, c.First.Timer.String())
	}
	fmt.Fprintln(tw)
}

func foldReach(fs []bbFold) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s %d (%d visible + %d offscreen)", f.ID, f.Total, f.Visible, f.Offscreen))
	}
	return strings.Join(parts, "; ")
}
