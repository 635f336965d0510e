package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// Pages that throw: in an inline script after a
// declaration, in a promise nobody catches, and in an availability check
// (which the module catches: a declaration mistake, not a throw).
const (
	throwsPage = `<!doctype html><title>Throws</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>pling.action({ id: "board.add", run: () => 1 }); boardz.render();</script>`
	rejectsPage = `<!doctype html><title>Rejects</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>pling.action({ id: "board.add", run: () => 1 });
Promise.reject(new Error("no board"));</script>`
	availThrowsPage = `<!doctype html><title>Availability throws</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>pling.action({ id: "board.add", available: () => { throw new Error("byId(undefined)"); }, run: () => 1 });</script>`
)

// TestPageThrew: pling check and pling describe say when the page threw,
// with the message and the place, from what the browser saw since the
// navigation (not from pling.js); an availability check that throws is a
// declaration mistake instead, and a clean page threw nothing.
func TestPageThrew(t *testing.T) {
	ctx, base := servePages(t, fstest.MapFS{"throws.html": {Data: []byte(throwsPage)}, "rejects.html": {Data: []byte(rejectsPage)},
		"avail.html": {Data: []byte(availThrowsPage)}, "clean.html": {Data: []byte(cleanPage)}})
	for _, tc := range []struct {
		page          string
		check, descr  []string // in pling check's stdout, in pling describe's stderr
		checkExit     int
		notInDescribe string
	}{
		{"throws.html",
			[]string{"the page threw: ReferenceError: boardz is not defined (at " + base + "/throws.html:3); declarations after it may be missing"},
			[]string{"pling describe: the page threw: ReferenceError: boardz is not defined (at " + base + "/throws.html:3)"},
			1, "declaration mistake"},
		{"rejects.html",
			[]string{"the page threw: unhandled rejection: Error: no board (at " + base + "/rejects.html:4)"},
			[]string{"pling describe: the page threw: unhandled rejection: Error: no board"},
			1, "declaration mistake"},
		{"avail.html",
			[]string{`"board.add": its availability check throws`},
			[]string{"the page has 1 declaration mistake(s)"},
			1, "threw"},
		{"clean.html", []string{"no declaration mistakes"}, nil, 0, "threw"},
	} {
		t.Run(tc.page, func(t *testing.T) {
			var stdout, stderr syncbuf.Buffer
			if code := run(ctx, []string{"check", base + "/" + tc.page}, &stdout, &stderr); code != tc.checkExit {
				t.Errorf("pling check: exit %d, want %d\n%s%s", code, tc.checkExit, stdout.String(), stderr.String())
			}
			for _, w := range tc.check {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("pling check printed no %q:\n%s", w, stdout.String())
				}
			}
			if strings.Contains(stdout.String(), "    at ") {
				t.Errorf("pling check printed a stack:\n%s", stdout.String())
			}
			stdout, stderr = syncbuf.Buffer{}, syncbuf.Buffer{}
			if code := run(ctx, []string{"describe", base + "/" + tc.page}, &stdout, &stderr); code != 0 {
				t.Fatalf("pling describe: exit %d\n%s", code, stderr.String())
			}
			for _, w := range tc.descr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("pling describe said no %q:\n%s", w, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), tc.notInDescribe) {
				t.Errorf("pling describe said %q:\n%s", tc.notInDescribe, stderr.String())
			}
		})
	}
}

// servePages readies a browser test (browserTest, demotest.Dist) and serves
// pages with pling serve --dir, for three minutes at most; it returns the
// test's context and the server's base URL.
func servePages(t *testing.T, pages fstest.MapFS) (context.Context, string) {
	t.Helper()
	browserTest(t)
	d := demotest.Dist(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	dir := t.TempDir()
	if err := os.CopyFS(dir, pages); err != nil {
		t.Fatal(err)
	}
	base, _ := serveDirForTest(t, dir, d)
	return ctx, base
}

// TestMCPPageThrew: pling mcp's browser.page says the page threw, through
// the browser the command starts.
func TestMCPPageThrew(t *testing.T) {
	_, base := servePages(t, fstest.MapFS{"throws.html": {Data: []byte(throwsPage)}})
	m := startMCP(t, base+"/throws.html")
	m.waitPage(t, `The page threw 1 error(s): "ReferenceError: boardz is not defined (at `+base+`/throws.html:3)"`)
}
