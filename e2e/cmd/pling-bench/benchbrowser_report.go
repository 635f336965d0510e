package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/chromedp/cdproto/accessibility"

	"github.com/pling-go/pling/internal/axtree"
)

// bbDist summarizes samples (milliseconds unless a field says otherwise):
// the median and the spread around it.
type bbDist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P10 float64 `json:"p10"`
	P90 float64 `json:"p90"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

func distOf(xs []float64) bbDist {
	if len(xs) == 0 {
		return bbDist{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return bbDist{N: len(s), P50: quantile(s, 0.5), P10: quantile(s, 0.1), P90: quantile(s, 0.9), Min: s[0], Max: s[len(s)-1]}
}

// quantile interpolates linearly between the closest ranks of sorted s.
func quantile(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (s[i+1]-s[i])*(pos-float64(i))
}

// spread is the p10–p90 range relative to the median.
func (d bbDist) spread() string {
	if d.P50 == 0 {
		return "–"
	}
	return fmt.Sprintf("p10–p90 %s–%s (±%.0f%%)", fmtMs(d.P10), fmtMs(d.P90), 50*(d.P90-d.P10)/d.P50)
}

func fmtMs(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 1:
		return fmt.Sprintf("%.1f ms", v)
	case v >= 0.01:
		return fmt.Sprintf("%.0f µs", v*1000)
	default:
		return fmt.Sprintf("%.1f µs", v*1000)
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.Inf(1)
	}
	return a / b
}

// bbTarget is one target of the issue: the figure, its limit and whether
// it is met. Value and Limit share a unit; Value/Limit ≤ 1 meets it.
type bbTarget struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Limit  float64 `json:"limit"`
	Unit   string  `json:"unit"`
	Met    bool    `json:"met"`
	Detail string  `json:"detail"`
}

func target(name string, value, limit float64, unit, detail string) bbTarget {
	return bbTarget{Name: name, Value: value, Limit: limit, Unit: unit, Met: value <= limit, Detail: detail}
}

func (t bbTarget) verdict() string {
	if t.Met {
		return "met"
	}
	return fmt.Sprintf("MISSED by %.0f%%", 100*(t.Value/t.Limit-1))
}

// axSnapshot serializes an accessibility tree compactly, the way an agent
// reading the page would get it: one line per node that carries meaning
// ("- role "name""), indented by depth; ignored nodes and unnamed
// generic containers are skipped (their children move up), and text that
// the name printed above it already contains is left out. It also counts the table
// rows the snapshot reaches (rows with cells: the header row has none).
func axSnapshot(nodes []*accessibility.Node) (text string, rows int) {
	byID, root := axtree.Index(nodes)
	if root == nil {
		return "", 0
	}
	var b strings.Builder
	// above is the name of the nearest node printed above this one.
	var walk func(n *accessibility.Node, depth int, above string)
	walk = func(n *accessibility.Node, depth int, above string) {
		role, name := axString(n.Role), strings.TrimSpace(axString(n.Name))
		show := !n.Ignored
		switch role {
		case "InlineTextBox":
			return // layout fragments of their StaticText
		case "generic", "none", "presentation", "LineBreak", "":
			show = show && name != ""
		case "StaticText":
			// Text says something only where the name above does not
			// already say it (a cell's or a button's name is its text).
			show = show && name != "" && !strings.Contains(above, name)
			role = "text"
		case "row":
			if !n.Ignored && hasChildRole(n, byID, "cell", "gridcell") {
				rows++
			}
		}
		if show {
			b.WriteString(strings.Repeat(" ", depth))
			b.WriteString("- ")
			b.WriteString(role)
			if name != "" {
				fmt.Fprintf(&b, " %q", name)
			}
			b.WriteByte('\n')
			depth++
			above = name
		}
		for _, id := range n.ChildIDs {
			if c := byID[id]; c != nil {
				walk(c, depth, above)
			}
		}
	}
	walk(root, 0, "")
	return b.String(), rows
}

func hasChildRole(n *accessibility.Node, byID map[accessibility.NodeID]*accessibility.Node, roles ...string) bool {
	for _, id := range n.ChildIDs {
		c := byID[id]
		if c == nil {
			continue
		}
		if slices.Contains(roles, axString(c.Role)) {
			return true
		}
		// Ignored wrappers between a row and its cells.
		if (c.Ignored || axString(c.Role) == "generic" || axString(c.Role) == "none") && hasChildRole(c, byID, roles...) {
			return true
		}
	}
	return false
}

func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	raw := []byte(v.Value)
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// writeBenchSVG draws one bar per target: the figure divided by its limit
// on a log scale, with the target line at 1 (left of it is met). Bars
// carry the figure and the limit as text; nothing but the standard
// library.
func writeBenchSVG(w io.Writer, title string, ts []bbTarget) error {
	const (
		left, barW, rowH, top = 330.0, 420.0, 30.0, 58.0
		lo, hi                = -2.0, 1.0 // log10 of the axis ends: 0.01× … 10×
	)
	width := left + barW + 330
	height := top + rowH*float64(len(ts)) + 40
	x := func(r float64) float64 {
		l := math.Log10(math.Max(r, math.Pow(10, lo)))
		l = math.Min(l, hi)
		return left + (l-lo)/(hi-lo)*barW
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="system-ui, sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="12" y="22" font-size="15" font-weight="600">%s</text>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="12" y="40" fill="#555">figure ÷ target limit, log scale; left of the line meets the target (green), right misses it (red)</text>`+"\n")
	for _, tick := range []float64{0.01, 0.1, 1, 10} {
		tx := x(tick)
		stroke, dash := "#ddd", ""
		if tick == 1 {
			stroke, dash = "#222", ` stroke-dasharray="4 3"`
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="%s"%s/>`+"\n", tx, top-6, tx, top+rowH*float64(len(ts)), stroke, dash)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" fill="#555">%g×</text>`+"\n", tx, top+rowH*float64(len(ts))+16, tick)
	}
	for i, t := range ts {
		y := top + rowH*float64(i)
		r := t.Value / t.Limit
		color := "#2e8b57"
		if !t.Met {
			color = "#c0392b"
		}
		x0, x1 := x(math.Pow(10, lo)), x(r)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, y+rowH/2+4, html.EscapeString(t.Name))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x0, y+5, math.Max(x1-x0, 1), rowH-10, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#333">%s</text>`+"\n", left+barW+8, y+rowH/2+4,
			html.EscapeString(fmt.Sprintf("%.3g× (%s %s; target ≤ %s %s)", r, fmtNum(t.Value), t.Unit, fmtNum(t.Limit), t.Unit)))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtNum(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
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
