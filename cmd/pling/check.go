package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/internal/pagetext"
)

func init() {
	register(command{"check", "list a page's declaration mistakes, each with its fix (for the page's author and CI)", runCheck})
}

// checkJS asks the page for its mistakes (pling.check(),
// docs/page-api.md §2.10) once its load event has fired, so that
// declarations made by scripts that run at load are in. What the page
// answers is bounded in the page before it is sent: at most maxProblems
// lines of at most maxProblemRead UTF-16 code units each (a longer line
// leaves only its length), a throw as a bounded message. The page's
// script may have replaced any function it calls, and so decides what
// the lines say; the bound itself uses only typeof, the length of a
// primitive string, comparisons and literals, which no script can
// redefine, so a page that answers 50 MB costs this side a few numbers.
const checkJS = `(async () => {
  let a;
  try {
    if (document.readyState !== "complete") await new Promise((ok) => addEventListener("load", ok, { once: true }));
    await new Promise((ok) => setTimeout(ok, 50));
    if (!window.pling || typeof window.pling.check !== "function") return { lines: ["pling: this page's pling.js has no check(): serve a current pling.js"] };
    a = await window.pling.check();
  } catch (e) {
    let m = typeof e === "string" ? e : "";
    try { const x = e && e.message; if (typeof x === "string") m = x; } catch (_) {}
    return { threw: m.length <= 1000 ? m : "" };
  }
  const lines = [], long = [];
  let n = 0, more = 0;
  try { n = a.length; } catch (_) {}
  for (let i = 0; i < n && i < 100000; i++) {
    let x = null;
    try { x = a[i]; } catch (_) {}
    if (typeof x !== "string") continue;
    if (lines.length + long.length >= MAX_LINES) { more++; continue; }
    if (x.length > MAX_LINE) long[long.length] = x.length; else lines[lines.length] = x;
  }
  return { lines, long, more };
})()`

// Bounds of what pling check reads of the page's answer (checkJS) and
// prints of it.
const (
	maxProblems     = 200
	maxProblemRead  = 4000
	maxProblemShown = 1000
)

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out, errs := newTerminal(stdout), newTerminal(stderr)
	defer out.Flush()
	defer errs.Flush()
	stdout, stderr = out, errs
	fl := newFlags("check", stderr,
		"Usage: pling check URL",
		"Loads the page in headless Chromium and lists every declaration the module refused or",
		"found wrong (docs/page-api.md §2.10), each with its fix; on a page that marks none of its",
		"content data-pling-user-content, also each markup declaration whose place looks like",
		"content the site's users wrote (a guess: docs/markup.md).",
		"Exit status: 0 no mistakes, 1 mistakes (or the page could not be checked), 2 usage.",
	)
	pos, exit, ok := parseFlags(fl, args)
	if !ok {
		return exit
	}
	if len(pos) != 1 || !isPageURL(pos[0]) {
		return usageError(fl, stderr, "want one page URL (http:// or https://)")
	}
	t, err := transportFor(ctx, pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "pling check: %v\n", err)
		return targetExit(err)
	}
	defer closeTransport(t)
	p, ok := t.(*cdp.Page)
	if !ok {
		fmt.Fprintln(stderr, "pling check: the page is not in a browser this command can read")
		return 1
	}
	problems, err := pageProblems(ctx, p, 30*time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "pling check: %s: the page's check did not finish: %v\n", pos[0], err)
		for _, m := range problems { // what the page threw
			fmt.Fprintf(stderr, "  - %s\n", problemLine(m))
		}
		return 1
	}
	problems = append(problems, suspectLines(readPlaces(ctx, p).places)...)
	if len(problems) == 0 {
		fmt.Fprintf(stdout, "pling check: %s: no declaration mistakes\n", pos[0])
		return 0
	}
	fmt.Fprintf(stdout, "pling check: %s: %d mistake(s)\n", pos[0], len(problems))
	for _, m := range problems {
		fmt.Fprintf(stdout, "  - %s\n", problemLine(m))
	}
	return 1
}

// pageProblems asks the page in p for its mistakes (checkJS), then adds
// what the page threw (cdp.Page.Thrown: uncaught exceptions and unhandled
// rejections since it loaded, seen by the browser, not by pling.js).
func pageProblems(ctx context.Context, p *cdp.Page, timeout time.Duration) ([]string, error) {
	cctx, cancel := context.WithTimeout(p.Context(), timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	ps, err := readProblems(cctx)
	return append(ps, thrownLines(p)...), err
}

// readProblems runs checkJS in the tab of ctx and reads its bounded
// answer: the lines, one line for each that was too long to read, and
// one for those over maxProblems.
func readProblems(ctx context.Context) ([]string, error) {
	js := strings.NewReplacer("MAX_LINES", strconv.Itoa(maxProblems), "MAX_LINE", strconv.Itoa(maxProblemRead)).Replace(checkJS)
	yes := true
	res, err := chromedp.Call(ctx, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: js, AwaitPromise: &yes, ReturnByValue: &yes})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return nil, errors.New("the page's answer could not be read")
	}
	var a struct {
		Lines []string `json:"lines"`
		Long  []int    `json:"long"`
		More  int      `json:"more"`
		Threw *string  `json:"threw"`
	}
	if err := json.Unmarshal(res.Result.Value, &a); err != nil {
		return nil, errors.New("the page's answer could not be read")
	}
	if a.Threw != nil {
		return nil, fmt.Errorf("pling.check() threw %s", pagetext.Quote(pagetext.Line(*a.Threw, maxProblemShown)))
	}
	out := a.Lines
	for _, n := range a.Long {
		out = append(out, fmt.Sprintf("pling: the page gave a line of %d characters, over the bound of %d: not read", n, maxProblemRead))
	}
	if a.More > 0 {
		out = append(out, fmt.Sprintf("pling: the page gave %d more line(s), over the bound of %d lines: not read", a.More, maxProblems))
	}
	return out, nil
}

// problemLine is one of the page's mistakes as pling check prints it:
// on one line, every character a terminal would act on escaped (ESC and
// CSI, OSC 52 and OSC 8 start with one; a newline could fake a line of
// pling's own), cut to maxProblemShown characters.
func problemLine(m string) string {
	return pagetext.Line(strings.TrimPrefix(m, "pling: "), maxProblemShown)
}

// thrownPrefix starts each line of thrownLines.
const thrownPrefix = "pling: the page threw: "

// thrownLines are what the page threw, one line each (at most five, and
// a count of the rest), each saying why it matters to the author.
func thrownLines(p *cdp.Page) []string {
	lines, total := p.Thrown()
	var out []string
	for _, l := range lines {
		out = append(out, thrownPrefix+l+"; declarations after it may be missing: fix the script")
	}
	if more := total - len(lines); more > 0 {
		out = append(out, fmt.Sprintf("%s%d more exception(s), not listed", thrownPrefix, more))
	}
	return out
}

// printPageProblems tells describe's reader, on w, that the page has
// declaration mistakes (and where to read them), and what it threw;
// nothing when it has none or cannot say.
func printPageProblems(ctx context.Context, w io.Writer, t any, url string) {
	p, ok := t.(*cdp.Page)
	if !ok {
		return
	}
	ps, _ := pageProblems(ctx, p, 10*time.Second)
	mistakes := 0
	for _, m := range ps {
		if strings.HasPrefix(m, thrownPrefix) {
			fmt.Fprintf(w, "pling describe: %s\n", problemLine(m))
		} else {
			mistakes++
		}
	}
	if mistakes > 0 {
		fmt.Fprintf(w, "pling describe: the page has %d declaration mistake(s) (refused, conflicting or wrong declarations)", mistakes)
		fmt.Fprintf(w, "; pling check %s lists them with their fixes\n", url)
	}
}

// placesJS reads the page's markup declarations from the module's bridge
// (places(), pagebridge.MarkupPlaces) once pling.check() has started it, and
// whether the page marks any of its content as its users'
// (data-pling-user-content). The page's script may have replaced the
// bridge, so what it answers is bounded before it is sent: a string of at
// most MAX_PLACES UTF-16 code units, else nothing.
const placesJS = `(() => {
  let marked = false, places = null;
  try { marked = !!document.querySelector("[data-pling-user-content]"); } catch (_) {}
  try {
    const b = window.__plingBridge;
    if (b && typeof b.places === "function") {
      const s = b.places();
      if (typeof s === "string" && s.length <= MAX_PLACES) places = s;
    }
  } catch (_) {}
  return { marked, places };
})()`

// maxPlacesRead bounds the JSON text of the page's markup places read
// (500 places of a few hundred bytes each).
const maxPlacesRead = 512 << 10

// markupPlace is one of the page's markup declarations, as the page's
// module writes it.
type markupPlace = pagebridge.MarkupPlace

// pagePlaces is what placesJS reads: the page's markup declarations
// (none when it cannot say), and whether it marks user content.
type pagePlaces struct {
	places []markupPlace
	marked bool
}

// readPlaces asks the page in p for its markup declarations (placesJS).
// On a page that marks its users' content somewhere, the guess at where
// users' content is (Suspect) is dropped: the site has said where its
// users write, and its own declarations outside the mark, in rows it
// renders around its users' words, are not theirs (RATIONALE "Why does
// pling check guess where users' content is?").
func readPlaces(ctx context.Context, p *cdp.Page) pagePlaces {
	cctx, cancel := context.WithTimeout(p.Context(), 10*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	yes := true
	js := strings.ReplaceAll(placesJS, "MAX_PLACES", strconv.Itoa(maxPlacesRead))
	res, err := chromedp.Call(cctx, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: js, ReturnByValue: &yes})
	if err != nil || res.ExceptionDetails != nil || res.Result == nil {
		return pagePlaces{}
	}
	var a struct {
		Marked bool    `json:"marked"`
		Places *string `json:"places"`
	}
	if json.Unmarshal(res.Result.Value, &a) != nil || a.Places == nil {
		return pagePlaces{marked: a.Marked}
	}
	var ps []markupPlace
	if json.Unmarshal([]byte(*a.Places), &ps) != nil {
		return pagePlaces{marked: a.Marked}
	}
	if a.Marked {
		for i := range ps {
			ps[i].Suspect = ""
		}
	}
	return pagePlaces{places: ps, marked: a.Marked}
}

// suspectLines are pling check's lines for the markup declarations whose
// place looks like content the site's users wrote, each with its fix.
func suspectLines(ps []markupPlace) []string {
	var out []string
	for _, p := range ps {
		if p.Suspect != "" && !p.UserContent {
			out = append(out, fmt.Sprintf("pling: %s %s (markup at %s) looks like content the site's users wrote: %s. Their markup speaks as the site: mark the element the site renders their content into data-pling-user-content (docs/markup.md); if this is the site's own, give its row element an id",
				pagetext.Line(p.Kind, 20), pagetext.Quote(pagetext.Line(p.Key, 200)), pagetext.Line(p.Path, 200), pagetext.Line(p.Suspect, 400)))
		}
	}
	return out
}
