package main

// The in-page measurements of pling-bench browser after the visits:
// describe and invoke beside the polyfill, a DOM edit under each
// observer, and describe against the ARIA snapshot.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/chromedp"
)

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
		if err := evalInto(tctx, o.timeout, expr, into); err != nil {
			return fmt.Errorf("%s: %w", url, err)
		}
		return nil
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
	err = evalInto(tctx, o.timeout, "__bench.getTools("+arg(max(o.reps/3, 20))+")", &p1000)
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
				url := rowsURL(base+"/bench/orders-"+v+".html", mode)
				tctx, done, err := b.open(url)
				if err != nil {
					return err
				}
				var res struct {
					Samples  []float64
					Elements int
					Rows     int
				}
				err = evalInto(tctx, o.timeout, "__bench.edits("+jsArgs(map[string]any{"kind": kind, "warm": 3, "reps": max(o.reps/5, 20), "batch": 50})+")", &res)
				done()
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
		url := rowsURL(base+"/orders/", mode)
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
		err = evalInto(tctx, time.Minute, "__bench.describeBytes()", &d)
		if err == nil && mode == "all" {
			var rt struct{ Tools, Items, Bytes int }
			err = evalInto(tctx, time.Minute, "__bench.rowTools()", &rt)
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
