package main

import (
	"context"
	"io/fs"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/helpdesk"
	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// mistakesPage makes each declaration mistake pling check reports once.
const mistakesPage = `<!doctype html><title>Mistakes</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>
  pling.state("board.count", () => 1);
  pling.action({ id: "board.size", params: { n: { type: "text" } }, run: () => 1 });
  pling.action({ id: "board.risky", Risk: "read", run: () => 1 });
  pling.action({ title: "No id", run: () => 1 });
  pling.action({ id: "board.dup", title: "One", run: () => 1 });
  pling.action({ id: "board.dup", title: "Two", run: () => 2 });
  pling.action({ id: "board.add", expect: { state: "board.total", change: "increase" }, run: () => 1 });
  pling.action({ id: "ticket.close", available: () => { throw new Error("byId(undefined)"); }, run: () => 1 });
</script>`

const cleanPage = `<!doctype html><title>Clean</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>
  pling.state("board.count", () => 1);
  pling.action({ id: "board.add", expect: { state: "board.count", change: "any" }, run: () => 1 });
</script>`

const unexposedPage = `<!doctype html><title>No expose</title>
<script src="/pling/pling.js"></script>
<script>pling.action({ id: "board.add", run: () => 1 });</script>`

// TestCheckCommand: pling check lists every mistake of a page seeded with
// each (naming the declaration and the fix) and exits 1; a clean page
// exits 0.
func TestCheckCommand(t *testing.T) {
	browserTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	base := serveFiles(t, map[string]string{"mistakes.html": mistakesPage, "clean.html": cleanPage, "unexposed.html": unexposedPage})
	for _, tc := range []struct {
		page     string
		wantExit int
		want     []string
	}{
		{"mistakes.html", 1, []string{
			`"board.size"`, `type`, // a param of type "text"
			`"Risk" is spelled "risk"`,
			`id: must be`,                        // no id
			`DUPLICATE_ACTION_ID`, `"board.dup"`, // named
			`"board.add": expect.state names the state "board.total"`,
			`"ticket.close": its availability check throws`,
		}},
		{"unexposed.html", 1, []string{`site allowlist is empty`, `data-expose="*"`}},
		{"clean.html", 0, []string{"no declaration mistakes"}},
	} {
		t.Run(tc.page, func(t *testing.T) {
			var stdout, stderr syncbuf.Buffer
			code := run(ctx, []string{"check", base + "/" + tc.page}, &stdout, &stderr)
			if code != tc.wantExit {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantExit, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("pling check printed no %q:\n%s", w, stdout.String())
				}
			}
		})
	}
}

// TestDescribeSaysMistakes: pling describe says, on stderr, when the page
// has declaration mistakes or threw, and points at pling check.
func TestDescribeSaysMistakes(t *testing.T) {
	browserTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	base := serveFiles(t, map[string]string{"mistakes.html": mistakesPage, "clean.html": cleanPage})
	for _, tc := range []struct{ page, want string }{
		{"mistakes.html", "the page has 6 declaration mistake(s)"},
		{"clean.html", ""},
	} {
		t.Run(tc.page, func(t *testing.T) {
			var stdout, stderr syncbuf.Buffer
			if code := run(ctx, []string{"describe", base + "/" + tc.page}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			got := stderr.String()
			if tc.want == "" && strings.Contains(got, "pling check") || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("stderr %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCheckHelpdesk: pling check finds no mistake on any page of the
// second site (internal/helpdesk), written from the docs alone; the demo
// site's pages are checked by TestCheckPages (e2e).
func TestCheckHelpdesk(t *testing.T) {
	browserTest(t)
	d := demotest.Dist(t)
	h, err := helpdesk.New(os.DirFS(d))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	pages, err := fs.Glob(helpdesk.Pages(), "*/*.html")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"index.html"}, pages...)
	if len(pages) < 4 {
		t.Fatalf("found only %v in the help desk", pages)
	}
	for _, p := range pages {
		t.Run(p, func(t *testing.T) {
			var stdout, stderr syncbuf.Buffer
			u := srv.URL + "/" + strings.TrimSuffix(p, "index.html")
			if strings.HasSuffix(p, "view.html") {
				u += "?id=T-1003"
			}
			if code := run(ctx, []string{"check", u}, &stdout, &stderr); code != 0 {
				t.Errorf("pling check %s: exit %d\nstdout:\n%s\nstderr:\n%s", u, code, stdout.String(), stderr.String())
			}
		})
	}
}
