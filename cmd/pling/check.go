package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent/cdp"
)

func init() {
	register(command{"check", "list a page's declaration mistakes, each with its fix (for the page's author and CI)", runCheck})
}

// checkJS asks the page for its mistakes (pling.check(),
// docs/page-api.md §2.10) once its load event has fired, so that
// declarations made by scripts that run at load are in.
const checkJS = `(async () => {
  if (document.readyState !== "complete") await new Promise((ok) => addEventListener("load", ok, { once: true }));
  await new Promise((ok) => setTimeout(ok, 50));
  if (!window.pling || typeof window.pling.check !== "function") return ["pling: this page's pling.js has no check(): serve a current pling.js"];
  return await window.pling.check();
})()`

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := newFlags("check", stderr,
		"Usage: pling check URL",
		"Loads the page in headless Chromium and lists every declaration the module refused or",
		"found wrong (docs/page-api.md §2.10), each with its fix.",
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
			fmt.Fprintf(stderr, "  - %s\n", strings.TrimPrefix(m, "pling: "))
		}
		return 1
	}
	if len(problems) == 0 {
		fmt.Fprintf(stdout, "pling check: %s: no declaration mistakes\n", pos[0])
		return 0
	}
	fmt.Fprintf(stdout, "pling check: %s: %d mistake(s)\n", pos[0], len(problems))
	for _, m := range problems {
		fmt.Fprintf(stdout, "  - %s\n", strings.TrimPrefix(m, "pling: "))
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
	ps, err := chromedp.Run(cctx, chromedp.Evaluate[[]string](checkJS, chromedp.EvalAwaitPromise))
	return append(ps, thrownLines(p)...), err
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
			fmt.Fprintf(w, "pling describe: %s\n", strings.TrimPrefix(m, "pling: "))
		} else {
			mistakes++
		}
	}
	if mistakes > 0 {
		fmt.Fprintf(w, "pling describe: the page has %d declaration mistake(s) (refused, conflicting or wrong declarations)", mistakes)
		fmt.Fprintf(w, "; pling check %s lists them with their fixes\n", url)
	}
}
