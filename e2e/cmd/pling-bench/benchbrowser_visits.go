package main

// The visits of pling-bench browser: a page cold and again, the trace that
// says what V8 compiled and cached, and the code-cache experiments.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

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
	err = evalInto(fctx, 5*time.Minute, "__bench.floor("+jsArgs(map[string]any{
		"exec": "/pling/wasm_exec.js", "wasm": "/pling/pling.wasm", "reads": 7, "starts": 4})+")", &fl)
	fdone()
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
