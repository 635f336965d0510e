package demosite

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/demosite/site"
	"github.com/pling-go/pling/internal/precompress"
	"github.com/pling-go/pling/internal/testing/httpcheck"
)

// fakeModule is a small stand-in for dist/, each of ModuleFiles:
// compressible, so every encoding is exercised, and quick to compress.
func fakeModule() fstest.MapFS {
	m := fstest.MapFS{}
	for _, name := range ModuleFiles {
		m[name] = &fstest.MapFile{Data: []byte(strings.Repeat("/* pling */ window.pling = window.pling || {};\n", 100))}
	}
	m["pling.wasm"].Data = append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("pling module bytes "), 400)...)
	return m
}

func newTestServer(t *testing.T, module fs.FS) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(t.Context(), module, site.Demo(), Options{Brotli: 11})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// get sends a request to the test server and returns the bytes on the
// wire.
func get(t *testing.T, ts *httptest.Server, method, path string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	return httpcheck.OnWire(t, method, ts.URL+path, header)
}

func TestServeContentTypes(t *testing.T) {
	_, ts := newTestServer(t, fakeModule())
	for _, tc := range []struct{ path, ctype string }{
		{"/pling/pling.wasm", "application/wasm"},
		{"/pling/pling.js", "text/javascript; charset=utf-8"},
		{"/pling/wasm_exec.js", "text/javascript; charset=utf-8"},
		{"/pling/ui.js", "text/javascript; charset=utf-8"},
		{"/pling/webmcp.js", "text/javascript; charset=utf-8"},
		{"/", "text/html; charset=utf-8"},
		{"/shop/", "text/html; charset=utf-8"},
		{"/shop/shop.js", "text/javascript; charset=utf-8"},
		{"/assets/site.css", "text/css; charset=utf-8"},
		{"/assets/pling.svg", "image/svg+xml"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res, _ := get(t, ts, "GET", tc.path, nil)
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
		})
	}
}

func TestServeEncodings(t *testing.T) {
	module := fakeModule()
	_, ts := newTestServer(t, module)
	raw := module["pling.wasm"].Data
	for _, tc := range httpcheck.Encodings {
		t.Run(tc.Name, func(t *testing.T) {
			res, body := get(t, ts, "GET", "/pling/pling.wasm", map[string]string{"Accept-Encoding": tc.Accept})
			if got := res.Header.Get("Content-Encoding"); got != tc.Want {
				t.Fatalf("Content-Encoding %q, want %q", got, tc.Want)
			}
			if got := res.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary %q", got)
			}
			if res.ContentLength != int64(len(body)) {
				t.Errorf("Content-Length %d for %d bytes", res.ContentLength, len(body))
			}
			if tc.Want != "" && len(body) >= len(raw) {
				t.Errorf("%s body is %d bytes, raw %d", tc.Want, len(body), len(raw))
			}
			if !bytes.Equal(httpcheck.Decode(t, tc.Want, body), raw) {
				t.Error("decoded body differs from the file")
			}
		})
	}
}

func TestServeETag(t *testing.T) {
	_, ts := newTestServer(t, fakeModule())
	etags := map[string]bool{}
	for _, accept := range []string{"br", "gzip", ""} {
		t.Run("accept="+accept, func(t *testing.T) {
			h := map[string]string{"Accept-Encoding": accept}
			res, body := get(t, ts, "GET", "/pling/pling.js", h)
			etag := res.Header.Get("ETag")
			if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
				t.Fatalf("ETag %q is not a strong entity tag", etag)
			}
			if etags[etag] {
				t.Errorf("ETag %s is shared by two encodings", etag)
			}
			etags[etag] = true
			if got := res.Header.Get("Cache-Control"); got != "public, max-age=300" {
				t.Errorf("Cache-Control %q", got)
			}
			for _, inm := range []string{etag, "W/" + etag, `"nope", ` + etag, "*"} {
				h["If-None-Match"] = inm
				res, b := get(t, ts, "GET", "/pling/pling.js", h)
				if res.StatusCode != http.StatusNotModified || len(b) != 0 {
					t.Errorf("If-None-Match %s: status %d, %d bytes; want 304 and none", inm, res.StatusCode, len(b))
				}
				if res.Header.Get("ETag") != etag {
					t.Errorf("304 without the ETag")
				}
			}
			h["If-None-Match"] = `"something-else"`
			res, b := get(t, ts, "GET", "/pling/pling.js", h)
			if res.StatusCode != 200 || !bytes.Equal(b, body) {
				t.Errorf("a stale ETag: status %d", res.StatusCode)
			}
		})
	}
}

func TestServeIsolationHeaders(t *testing.T) {
	_, ts := newTestServer(t, fakeModule())
	_, empty := newTestServer(t, fstest.MapFS{})
	for _, tc := range []struct {
		name string
		ts   *httptest.Server
		path string
		code int
		corp string
	}{
		{"module", ts, "/pling/pling.wasm", 200, "cross-origin"},
		{"page", ts, "/orders/", 200, "same-origin"},
		{"page asset", ts, "/assets/site.css", 200, "same-origin"},
		{"not found", ts, "/nope", 404, ""},
		{"module missing", empty, "/pling/pling.wasm", 503, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := get(t, tc.ts, "GET", tc.path, nil)
			if res.StatusCode != tc.code {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.code)
			}
			got := map[string]string{
				"Cross-Origin-Opener-Policy":   res.Header.Get("Cross-Origin-Opener-Policy"),
				"Cross-Origin-Embedder-Policy": res.Header.Get("Cross-Origin-Embedder-Policy"),
				"Cross-Origin-Resource-Policy": res.Header.Get("Cross-Origin-Resource-Policy"),
			}
			want := map[string]string{
				"Cross-Origin-Opener-Policy":   "same-origin",
				"Cross-Origin-Embedder-Policy": "require-corp",
				"Cross-Origin-Resource-Policy": tc.corp,
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("headers (-want +got):\n%s", d)
			}
		})
	}
}

func TestServeModuleMissing(t *testing.T) {
	partial := fakeModule()
	delete(partial, "pling.wasm")
	for _, tc := range []struct {
		name    string
		module  fstest.MapFS
		missing []string
	}{
		{"nothing built", fstest.MapFS{".keep": {}}, ModuleFiles},
		{"no wasm", partial, []string{"pling.wasm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ts := newTestServer(t, tc.module)
			if d := cmp.Diff(tc.missing, s.missing); d != "" {
				t.Fatalf("missing (-want +got):\n%s", d)
			}
			for _, name := range tc.missing {
				res, body := get(t, ts, "GET", "/pling/"+name, nil)
				if res.StatusCode != http.StatusServiceUnavailable {
					t.Errorf("%s: status %d, want 503", name, res.StatusCode)
				}
				if !strings.Contains(string(body), "run make wasm") {
					t.Errorf("%s: body %q does not say to run make wasm", name, body)
				}
				if res.Header.Get("Cache-Control") != "no-store" {
					t.Errorf("%s: a 503 must not be cached", name)
				}
			}
			// The pages still work for a person.
			if res, _ := get(t, ts, "GET", "/shop/", nil); res.StatusCode != 200 {
				t.Errorf("/shop/: status %d", res.StatusCode)
			}
			if res, _ := get(t, ts, "GET", "/pling/other.js", nil); res.StatusCode != 404 {
				t.Errorf("/pling/other.js: status %d, want 404", res.StatusCode)
			}
		})
	}
}

func TestServeDemoPages(t *testing.T) {
	_, ts := newTestServer(t, fakeModule())
	for _, tc := range []struct{ path, contains string }{
		{"/", `href="/shop/"`},
		{"/shop/", `cart.add`},
		{"/orders/", `id="viewport"`},
		{"/settings/", `data-pling-action="settings.save"`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res, body := get(t, ts, "GET", tc.path, map[string]string{"Accept-Encoding": "gzip"})
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			if got := res.Header.Get("Cache-Control"); got != "no-cache" {
				t.Errorf("Cache-Control %q", got)
			}
			page := string(httpcheck.Decode(t, res.Header.Get("Content-Encoding"), body))
			if tc.path != "/" && !strings.Contains(page, `<script src="/pling/pling.js" data-expose="*" defer></script>`) {
				t.Error("the page does not load the shim as docs/page-api.md shows")
			}
			if tc.path == "/shop/" {
				res, body := get(t, ts, "GET", "/shop/shop.js", nil)
				if res.StatusCode != 200 || !strings.Contains(string(body), `id: "cart.add"`) {
					t.Errorf("/shop/shop.js: status %d", res.StatusCode)
				}
			} else if !strings.Contains(page, tc.contains) {
				t.Errorf("page lacks %q", tc.contains)
			}
		})
	}
	t.Run("directory without slash redirects", func(t *testing.T) {
		res, _ := get(t, ts, "GET", "/orders?lang=zh-CN", nil)
		if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/orders/?lang=zh-CN" {
			t.Errorf("status %d, Location %q", res.StatusCode, res.Header.Get("Location"))
		}
	})
	t.Run("HEAD has headers and no body", func(t *testing.T) {
		res, body := get(t, ts, "HEAD", "/pling/pling.wasm", map[string]string{"Accept-Encoding": "br"})
		if res.StatusCode != 200 || len(body) != 0 || res.ContentLength <= 0 || res.Header.Get("Content-Encoding") != "br" {
			t.Errorf("status %d, %d bytes, Content-Length %d", res.StatusCode, len(body), res.ContentLength)
		}
	})
	t.Run("POST is refused", func(t *testing.T) {
		res, _ := get(t, ts, "POST", "/shop/", nil)
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("status %d, Allow %q", res.StatusCode, res.Header.Get("Allow"))
		}
	})
	t.Run("no way out of the site", func(t *testing.T) {
		for _, p := range []string{"/../serve.go", "/%2e%2e/serve.go", "/shop/../../go.mod", "/internal/site/site.go"} {
			if res, _ := get(t, ts, "GET", p, nil); res.StatusCode != 404 {
				t.Errorf("%s: status %d, want 404", p, res.StatusCode)
			}
		}
	})
}

// TestServeBrotliUpgrade: a large file starts at a fast brotli quality
// and is recompressed at the requested one in the background; its ETag
// names the bytes it has.
func TestServeBrotliUpgrade(t *testing.T) {
	var big bytes.Buffer
	for i := 0; big.Len() < precompress.BigFile+1024; i++ {
		big.WriteString("func f")
		big.WriteString(strings.Repeat("x", i%97))
		big.WriteString("() { return pling }\n")
	}
	module := fakeModule()
	module["pling.wasm"] = &fstest.MapFile{Data: big.Bytes()}
	s, err := New(t.Context(), module, site.Demo(), Options{Brotli: 7})
	if err != nil {
		t.Fatal(err)
	}
	f := s.files["/pling/pling.wasm"]
	if got := f.br.Load().tag; got != "-br5" {
		t.Errorf("first brotli tag %q, want -br5", got)
	}
	select {
	case <-s.upgraded:
	case <-time.After(time.Minute):
		t.Fatal("the background upgrade did not finish")
	}
	if got := f.br.Load().tag; got != "-br7" {
		t.Errorf("upgraded brotli tag %q, want -br7", got)
	}
	if got := s.files["/pling/pling.js"].br.Load().tag; got != "-br7" {
		t.Errorf("a small file is compressed at the requested quality at once; tag %q", got)
	}
}

// TestServeBuiltForms: pling serve's site server over a module directory
// where make wasm built the brotli and gzip forms beside each file
// compresses none of the module's files when it starts and upgrades none
// in the background; its first answer for pling.wasm is the built brotli.
func TestServeBuiltForms(t *testing.T) {
	var big bytes.Buffer
	for i := 0; big.Len() < precompress.BigFile+1024; i++ {
		big.WriteString("func f" + strings.Repeat("x", i%97) + "() { return pling }\n")
	}
	module := fakeModule()
	module["pling.wasm"] = &fstest.MapFile{Data: big.Bytes()}
	for _, name := range ModuleFiles {
		raw := module[name].Data
		var br, gz bytes.Buffer
		bw := brotli.NewWriterLevel(&br, 4)
		bw.Write(raw)
		bw.Close()
		gw := gzip.NewWriter(&gz)
		gw.Write(raw)
		gw.Close()
		module[name+".br"] = &fstest.MapFile{Data: br.Bytes()}
		module[name+".gz"] = &fstest.MapFile{Data: gz.Bytes()}
	}
	before := precompress.Compressions()
	s, err := New(t.Context(), module, fstest.MapFS{}, Options{Brotli: 11})
	if err != nil {
		t.Fatal(err)
	}
	if n := precompress.Compressions() - before; n != 0 {
		t.Errorf("compressed %d bodies at start, want none", n)
	}
	if late := s.Upgrading(); len(late) != 0 {
		t.Errorf("upgrading %v in the background, want nothing", late)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	res, body := get(t, ts, "GET", "/pling/pling.wasm", map[string]string{"Accept-Encoding": "br, gzip"})
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "br" || !bytes.Equal(body, module["pling.wasm.br"].Data) {
		t.Errorf("first answer for pling.wasm: %d %q, %d bytes; want 200 br with the built form (%d bytes)",
			res.StatusCode, res.Header.Get("Content-Encoding"), len(body), len(module["pling.wasm.br"].Data))
	}
}
