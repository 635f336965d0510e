package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// TestServeDir: pling serve --dir serves one's own pages and Pling beside
// them at /pling/, and keeps dot files private.
func TestServeDir(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"index.html":      `<!doctype html><script src="/pling/pling.js" data-expose="*"></script>`,
		"shop/index.html": `<!doctype html><title>shop</title>`,
		".env":            "SECRET=1",
		".git/config":     "[core]",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
	defer ts.Close()
	for _, tc := range []struct {
		path, wantType string
		want           int
		wantBody       string
	}{
		{"/", "text/html; charset=utf-8", 200, "/pling/pling.js"},
		{"/shop/", "text/html; charset=utf-8", 200, "shop"},
		{"/pling/pling.js", "text/javascript; charset=utf-8", 200, "shim"},
		{"/pling/pling.wasm", "application/wasm", 200, "asm"},
		{"/pling/" + ph.Hashed("pling.wasm"), "application/wasm", 200, "asm"},
		{"/.env", "", 404, ""},
		{"/.git/config", "", 404, ""},
		{"/nope.html", "", 404, ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r, err := http.Get(ts.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Body.Close()
			b, _ := io.ReadAll(r.Body)
			if r.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", r.StatusCode, tc.want)
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
