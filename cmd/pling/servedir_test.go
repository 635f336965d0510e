package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/syncbuf"
	"github.com/pling-go/pling/plinghttp"
)

// TestServeDir: pling serve --dir serves one's own pages and Pling beside
// them at /pling/, and keeps dot files private; and what a hostile
// request or a hostile file tree tries against it fails. A symbolic link
// that leads out of DIR is not followed (a cloned repository may carry
// one to /etc or ~), a link that stays inside is; encoded ".." never
// leaves DIR; a directory without index.html is not listed (a listing
// would name the dot files whose contents are refused). Each path is
// sent as written, not cleaned by the client.
func TestServeDir(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("OUTSIDE-SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := writeTree(t, map[string]string{
		"index.html":       `<!doctype html><script src="/pling/pling.js" data-expose="*"></script>`,
		"shop/index.html":  `<!doctype html><title>shop</title>`,
		".env":             "SECRET=1",
		".git/config":      "[core]",
		"docs/a.txt":       "inside-a",
		"bare/.env":        "SECRET=1",
		"bare/visible.txt": "v",
	})
	for link, target := range map[string]string{
		"leak.txt":   filepath.Join(outside, "secret.txt"),
		"leakdir":    outside,
		"rel.txt":    "../" + filepath.Base(outside) + "/secret.txt",
		"inside.txt": "docs/a.txt",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	ts, ph := serveDirHandler(t, dir)
	for _, tc := range []struct {
		name, path, wantType string
		want                 int
		wantBody             string
	}{
		{"/", "/", "text/html; charset=utf-8", 200, "/pling/pling.js"},
		{"/shop/", "/shop/", "text/html; charset=utf-8", 200, "shop"},
		{"/pling/pling.js", "/pling/pling.js", "text/javascript; charset=utf-8", 200, "shim"},
		{"/pling/pling.wasm", "/pling/pling.wasm", "application/wasm", 200, "asm"},
		{"/pling/ hashed", "/pling/" + ph.Hashed("pling.wasm"), "application/wasm", 200, "asm"},
		{"/.env", "/.env", "", 404, ""},
		{"/.git/config", "/.git/config", "", 404, ""},
		{"/nope.html", "/nope.html", "", 404, ""},
		{"symlink to a file outside", "/leak.txt", "", 404, ""},
		{"symlink to a directory outside", "/leakdir/secret.txt", "", 404, ""},
		{"relative symlink outside", "/rel.txt", "", 404, ""},
		{"symlink inside", "/inside.txt", "", 200, "inside-a"},
		{"encoded dotdot", "/docs/%2e%2e/%2e%2e/" + filepath.Base(outside) + "/secret.txt", "", 404, ""},
		{"encoded slash dotdot", "/docs/..%2f..%2f" + filepath.Base(outside) + "%2fsecret.txt", "", 404, ""},
		{"encoded dot file", "/bare/%2eenv", "", 404, ""},
		{"directory without index", "/bare/", "", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", ts.URL+"/", nil)
			req.URL.RawPath, req.URL.Path = "", ""
			req.URL.Opaque = tc.path
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Body.Close()
			b, _ := io.ReadAll(r.Body)
			// No file outside DIR, no dot file's contents, no listing
			// naming one.
			if strings.Contains(string(b), "SECRET") || strings.Contains(string(b), ".env") {
				t.Fatalf("body leaks: %q", b)
			}
			if r.StatusCode != tc.want {
				t.Fatalf("status %d body %q, want %d", r.StatusCode, b, tc.want)
			}
			if tc.wantType != "" && r.Header.Get("Content-Type") != tc.wantType {
				t.Errorf("Content-Type %q, want %q", r.Header.Get("Content-Type"), tc.wantType)
			}
			if !strings.Contains(string(b), tc.wantBody) {
				t.Errorf("body %q lacks %q", b, tc.wantBody)
			}
			if strings.HasPrefix(tc.path, "/pling/") && r.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("Access-Control-Allow-Origin %q under /pling/", r.Header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}

func TestServeDirUsage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(file, []byte("<p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, dir, want string }{
		{"missing", filepath.Join(t.TempDir(), "nope"), "no such file"},
		{"a file", file, "is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, "serve", "--addr", "127.0.0.1:0", "--dir", tc.dir)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// TestServeDirPastedTag: the tag pling serve --dir prints, pasted into a
// page with an inline script right after it that calls pling.action, is
// described in headless Chromium with that action: the page never sees
// "pling is not defined" (which a tag with defer would cause).
func TestServeDirPastedTag(t *testing.T) {
	browserTest(t)
	d := demotest.Dist(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	// The page is written after serve prints its tag; serve reads files per request.
	base, printed := serveDirForTest(t, dir, d)
	page := "<!doctype html><title>Board</title>\n" + printed + `
<script>
  pling.action({ id: "board.rename", title: "Rename the board", run: () => true });
</script>
`
	if err := os.WriteFile(filepath.Join(dir, "board.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr syncbuf.Buffer
	if code := run(ctx, []string{"describe", base + "/board.html"}, &stdout, &stderr); code != 0 {
		t.Fatalf("pling describe: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "board.rename") {
		t.Errorf("the pasted tag with a declaration right after it: describe lists no board.rename:\n%s", stdout.String())
	}
}

// serveDirHandler serves dir as pling serve --dir does (dirHandler), with
// a tiny stand-in module, until the test ends.
func serveDirHandler(t *testing.T, dir string) (*httptest.Server, *plinghttp.Server) {
	t.Helper()
	module := fstest.MapFS{
		"pling.js":     {Data: []byte("/* shim */")},
		"wasm_exec.js": {Data: []byte("/* go */")},
		"pling.wasm":   {Data: []byte("\x00asm\x01\x00\x00\x00")},
	}
	h, ph, err := dirHandler(module, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts, ph
}

// serveFiles writes files (path: content) to a scratch directory and
// serves it as serveDirForTest does, with the built module; it returns
// the base URL.
func serveFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	base, _ := serveDirForTest(t, writeTree(t, files), demotest.Dist(t))
	return base
}

// servePage serves one page, html at /name, as serveFiles does and
// returns its URL.
func servePage(t *testing.T, name, html string) string {
	t.Helper()
	return serveFiles(t, map[string]string{name: html}) + "/" + name
}

// serveDirForTest runs pling serve --dir dir in process until the test
// ends and returns its base URL and the tag it printed to paste.
func serveDirForTest(t *testing.T, dir, dist string) (base, printed string) {
	t.Helper()
	addr := regexp.MustCompile(`pling serve: (http://[^/ ]+)/`)
	tag := regexp.MustCompile(`^\s*(<script src="/pling/pling.js".*</script>)$`)
	startCmd(t, run, "serve", "--dir", dir, "--addr", "127.0.0.1:0", "--dist", dist).readUntil(t, func(line string) bool {
		if m := addr.FindStringSubmatch(line); m != nil {
			base = m[1]
		}
		if m := tag.FindStringSubmatch(line); m != nil {
			printed = m[1]
		}
		return base != "" && printed != ""
	})
	return base, printed
}

// TestServeDirRefusesFraming: pling serve --dir
// pages may not be framed by another site (an approval dialog under a
// foreign overlay is clickjacking): every file it serves says
// frame-ancestors 'none' and X-Frame-Options: DENY.
func TestServeDirRefusesFraming(t *testing.T) {
	dir := writeTree(t, map[string]string{"index.html": `<!doctype html><title>home</title>`, "shop/page.html": `<!doctype html>`})
	ts, _ := serveDirHandler(t, dir)
	for _, p := range []string{"/", "/shop/page.html"} {
		r, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if got := [2]string{r.Header.Get("Content-Security-Policy"), r.Header.Get("X-Frame-Options")}; got != [2]string{"frame-ancestors 'none'", "DENY"} {
			t.Errorf("%s: CSP %q, X-Frame-Options %q; want frame-ancestors 'none' and DENY", p, got[0], got[1])
		}
	}
}
