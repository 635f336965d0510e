package plinghttp_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/precompress"
	"github.com/pling-go/pling/internal/testing/httpcheck"
	"github.com/pling-go/pling/plinghttp"
)

// The files are text repeated so that they compress; their content is not
// the subject here (e2e's TestCrossOriginSRI serves the real module).
var (
	shim   = []byte(strings.Repeat("/* pling.js */ window.pling = {};\n", 100))
	module = append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("module bytes "), 500)...)
	dir    = fstest.MapFS{
		"pling.js":     {Data: shim},
		"wasm_exec.js": {Data: []byte(strings.Repeat("// wasm_exec\n", 100))},
		"pling.wasm":   {Data: module},
		"tiny.txt":     {Data: []byte("not served")},
	}
)

// serve mounts h at /pling/ and sends it a request; the tests ask for a
// content coding explicitly and see the answer's bytes on the wire.
func serve(t *testing.T, h http.Handler, method, path string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/pling/", h)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return httpcheck.OnWire(t, method, ts.URL+path, header)
}

func newServer(t *testing.T, opts ...plinghttp.Option) *plinghttp.Server {
	t.Helper()
	h, err := plinghttp.New(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestContentType(t *testing.T) {
	h := newServer(t)
	for _, tc := range []struct{ path, want string }{
		{"/pling/pling.wasm", "application/wasm"},
		{"/pling/pling.js", "text/javascript; charset=utf-8"},
		{"/pling/wasm_exec.js", "text/javascript; charset=utf-8"},
		{"/pling/" + h.Hashed("pling.wasm"), "application/wasm"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r, _ := serve(t, h, "GET", tc.path, nil)
			if r.StatusCode != 200 || r.Header.Get("Content-Type") != tc.want {
				t.Errorf("status %d, Content-Type %q, want 200 %q", r.StatusCode, r.Header.Get("Content-Type"), tc.want)
			}
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
		})
	}
}

func TestEncoding(t *testing.T) {
	h := newServer(t)
	for _, tc := range httpcheck.Encodings {
		t.Run(tc.Name, func(t *testing.T) {
			for _, name := range []string{"pling.wasm", "pling.js"} {
				r, b := serve(t, h, "GET", "/pling/"+name, map[string]string{"Accept-Encoding": tc.Accept})
				if got := r.Header.Get("Content-Encoding"); got != tc.Want {
					t.Errorf("%s: Content-Encoding %q, want %q", name, got, tc.Want)
				}
				if !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
					t.Errorf("%s: Vary %q lacks Accept-Encoding", name, r.Header.Get("Vary"))
				}
				want := dir[name].Data
				if got := httpcheck.Decode(t, r.Header.Get("Content-Encoding"), b); !bytes.Equal(got, want) {
					t.Errorf("%s: the body decodes to %d bytes, not the file's %d", name, len(got), len(want))
				}
			}
		})
	}
}

func TestETag(t *testing.T) {
	h := newServer(t)
	tags := map[string]string{}
	for _, enc := range []string{"br", "gzip", ""} {
		r, _ := serve(t, h, "GET", "/pling/pling.wasm", map[string]string{"Accept-Encoding": enc})
		tag := r.Header.Get("ETag")
		if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) {
			t.Fatalf("%q: ETag %q is not a strong tag", enc, tag)
		}
		if prev, ok := tags[tag]; ok {
			t.Errorf("encodings %q and %q share the ETag %s", prev, enc, tag)
		}
		tags[tag] = enc
		for _, tc := range []struct {
			name, inm string
			want      int
		}{
			{"its tag", tag, 304},
			{"weak", "W/" + tag, 304},
			{"in a list", `"other", ` + tag, 304},
			{"star", "*", 304},
			{"another", `"other"`, 200},
		} {
			t.Run(enc+"/"+tc.name, func(t *testing.T) {
				r, _ := serve(t, h, "GET", "/pling/pling.wasm", map[string]string{"Accept-Encoding": enc, "If-None-Match": tc.inm})
				if r.StatusCode != tc.want {
					t.Errorf("If-None-Match %s: status %d, want %d", tc.inm, r.StatusCode, tc.want)
				}
			})
		}
	}
}

func TestCacheControl(t *testing.T) {
	h := newServer(t)
	hashed := h.Hashed("pling.wasm")
	if !strings.HasPrefix(hashed, "pling.") || !strings.HasSuffix(hashed, ".wasm") || hashed == "pling.wasm" {
		t.Fatalf("Hashed(pling.wasm) = %q", hashed)
	}
	for _, tc := range []struct{ path, want string }{
		{"/pling/pling.wasm", "public, no-cache"},
		{"/pling/pling.js", "public, no-cache"},
		{"/pling/" + hashed, "public, max-age=31536000, immutable"},
		{"/pling/" + h.Hashed("pling.js"), "public, max-age=31536000, immutable"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r, _ := serve(t, h, "GET", tc.path, nil)
			if got := r.Header.Get("Cache-Control"); got != tc.want {
				t.Errorf("Cache-Control %q, want %q", got, tc.want)
			}
		})
	}
	if r, b := serve(t, h, "GET", "/pling/"+hashed, nil); !bytes.Equal(httpcheck.Decode(t, r.Header.Get("Content-Encoding"), b), module) {
		t.Error("the hashed name serves other bytes")
	}
}

func TestCORS(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []plinghttp.Option
		wantACAO  string
		wantVaryO bool
	}{
		{"default: any origin", nil, "*", false},
		{"one origin", []plinghttp.Option{plinghttp.WithAllowOrigin("https://shop.example")}, "https://shop.example", true},
		{"none", []plinghttp.Option{plinghttp.WithAllowOrigin("")}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newServer(t, tc.opts...)
			r, _ := serve(t, h, "GET", "/pling/pling.wasm", map[string]string{"Origin": "https://shop.example"})
			if got := r.Header.Get("Access-Control-Allow-Origin"); got != tc.wantACAO {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tc.wantACAO)
			}
			if got := r.Header.Get("Cross-Origin-Resource-Policy"); got != "cross-origin" {
				t.Errorf("Cross-Origin-Resource-Policy %q, want cross-origin", got)
			}
			if got := strings.Contains(strings.Join(r.Header.Values("Vary"), ","), "Origin"); got != tc.wantVaryO {
				t.Errorf("Vary %v: Origin listed %v, want %v", r.Header.Values("Vary"), got, tc.wantVaryO)
			}
		})
	}
	t.Run("preflight", func(t *testing.T) {
		r, _ := serve(t, newServer(t), "OPTIONS", "/pling/pling.wasm", map[string]string{"Origin": "https://shop.example", "Access-Control-Request-Method": "GET"})
		if r.StatusCode != 204 || r.Header.Get("Access-Control-Allow-Methods") != "GET, HEAD" || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("preflight: %d %v", r.StatusCode, r.Header)
		}
	})
}

func TestStatus(t *testing.T) {
	h := newServer(t)
	noModule, err := plinghttp.New(fstest.MapFS{"pling.js": {Data: shim}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"wasm_exec.js", "pling.wasm"}, noModule.Missing()); diff != "" {
		t.Errorf("Missing (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name, method, path string
		h                  http.Handler
		want               int
	}{
		{"HEAD", "HEAD", "/pling/pling.js", h, 200},
		{"a file it does not serve", "GET", "/pling/tiny.txt", h, 404},
		{"POST", "POST", "/pling/pling.js", h, 405},
		{"the module not built", "GET", "/pling/pling.wasm", noModule, 503},
		{"an optional file absent", "GET", "/pling/ui.js", noModule, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, _ := serve(t, tc.h, tc.method, tc.path, nil); r.StatusCode != tc.want {
				t.Errorf("%s %s: %d, want %d", tc.method, tc.path, r.StatusCode, tc.want)
			}
		})
	}
}

func TestIntegrity(t *testing.T) {
	h := newServer(t)
	for _, name := range []string{"pling.js", "pling.wasm", "wasm_exec.js"} {
		sum := sha512.Sum384(dir[name].Data)
		want := "sha384-" + base64.StdEncoding.EncodeToString(sum[:])
		if got := h.Integrity(name); got != want {
			t.Errorf("Integrity(%s) = %q, want %q", name, got, want)
		}
		if got := h.Integrities()[name]; got != want {
			t.Errorf("Integrities()[%s] = %q, want %q", name, got, want)
		}
	}
	if h.Integrity("ui.js") != "" {
		t.Error("Integrity of a file it does not serve")
	}
}

func TestBadOption(t *testing.T) {
	if _, err := plinghttp.New(dir, plinghttp.WithBrotli(12, 5)); err == nil {
		t.Error("brotli quality 12 accepted")
	}
}

// TestNoModuleFailsLoudly: a handler without the module says why, in the
// 503 body and once in the log, and Handler logs it at construction (the
// module of a go get has only plinghttp/dist/.keep).
func TestNoModuleFailsLoudly(t *testing.T) {
	var logged bytes.Buffer
	l := slog.New(slog.NewTextHandler(&logged, nil))
	noModule, err := plinghttp.New(fstest.MapFS{"pling.js": {Data: shim}}, plinghttp.WithLogger(l))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r, body := serve(t, noModule, "GET", "/pling/pling.wasm", nil)
		if r.StatusCode != 503 || !strings.Contains(string(body), "make wasm") || !strings.Contains(string(body), "go get") {
			t.Errorf("GET pling.wasm: %d %q, want 503 saying the module is not built and how to build it", r.StatusCode, body)
		}
	}
	if n := strings.Count(logged.String(), "level=ERROR"); n != 1 {
		t.Errorf("logged %d errors for three requests, want 1:\n%s", n, logged.String())
	}
	if !strings.Contains(logged.String(), "pling.wasm") {
		t.Errorf("the log line does not name the missing file: %s", logged.String())
	}

	logged.Reset()
	h := plinghttp.Handler(plinghttp.WithLogger(l))
	if got := strings.Contains(logged.String(), "not embedded"); got != (len(h.Missing()) > 0) {
		t.Errorf("Handler with missing %v logged %q", h.Missing(), logged.String())
	}
}

// TestBuiltForms: a handler over a directory where make wasm built the
// brotli and gzip forms beside the files (NAME.br, NAME.gz) compresses
// nothing when it starts, and its first answer for pling.wasm is those
// brotli bytes; a form left from other bytes is never served. Handler()
// over the embedded build (plinghttp/dist, when make wasm ran) does the
// same.
func TestBuiltForms(t *testing.T) {
	br := func(b []byte) []byte {
		var out bytes.Buffer
		w := brotli.NewWriterLevel(&out, 5)
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		w := gzip.NewWriter(&out)
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	built := fstest.MapFS{}
	for name, f := range dir {
		built[name] = f
		built[name+".br"] = &fstest.MapFile{Data: br(f.Data)}
		built[name+".gz"] = &fstest.MapFile{Data: gz(f.Data)}
	}
	stale := fstest.MapFS{}
	for name, f := range built {
		stale[name] = f
	}
	stale["pling.wasm.br"] = &fstest.MapFile{Data: br([]byte("an earlier module"))}

	tests := []struct {
		name            string
		handler         func(t *testing.T) http.Handler
		wantCompressed  bool
		wantBody        []byte // the brotli body of the first answer, when known
		wantContentType string
	}{
		{"forms built beside the files", func(t *testing.T) http.Handler {
			h, err := plinghttp.New(built)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}, false, built["pling.wasm.br"].Data, "application/wasm"},
		{"a stale brotli form is compressed again, not served", func(t *testing.T) http.Handler {
			h, err := plinghttp.New(stale)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}, true, nil, "application/wasm"},
		{"Handler() over the embedded build", func(t *testing.T) http.Handler {
			if _, err := fs.Stat(plinghttp.Embedded(), "pling.wasm"); err != nil {
				t.Skip("plinghttp/dist has no module: make wasm has not run")
			}
			return plinghttp.Handler()
		}, false, nil, "application/wasm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := precompress.Compressions()
			h := tt.handler(t)
			if n := precompress.Compressions() - before; (n > 0) != tt.wantCompressed {
				t.Errorf("compressed %d bodies at start, want any: %v", n, tt.wantCompressed)
			}
			resp, body := serve(t, h, "GET", "/pling/pling.wasm", map[string]string{"Accept-Encoding": "gzip, br"})
			if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "br" || resp.Header.Get("Content-Type") != tt.wantContentType {
				t.Fatalf("first answer for pling.wasm: %d, Content-Encoding %q, Content-Type %q; want 200 br %s",
					resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Type"), tt.wantContentType)
			}
			if tt.wantBody != nil && !bytes.Equal(body, tt.wantBody) {
				t.Errorf("the brotli body is not the built form (%d bytes, want %d)", len(body), len(tt.wantBody))
			}
			raw, err := io.ReadAll(brotli.NewReader(bytes.NewReader(body)))
			if err != nil || len(raw) < 8 || string(raw[:4]) != "\x00asm" {
				t.Errorf("the brotli body does not decode to a module: %v", err)
			}
		})
	}
}
