package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"

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
