package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/pling-go/pling/cmd/pling/internal/site"
)

func init() {
	register(command{"serve", "serve the demo site and the module over HTTP", runServe})
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	fl.SetOutput(stderr)
	addr := fl.String("addr", "127.0.0.1:8080", "the address to listen on (port 0 picks a free port)")
	dist := fl.String("dist", "", "serve the module from this directory (make wasm builds dist/) instead of the copy embedded in the binary")
	quality := fl.Int("brotli", brotli.BestCompression, "brotli quality 0–11 for the module; files over 1 MiB start at 5 and are upgraded in the background")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pling serve [--addr HOST:PORT] [--dist DIR]")
		fmt.Fprintln(stderr, "Serves the demo site (/shop/, /orders/, /settings/) and the module under /pling/,")
		fmt.Fprintln(stderr, "precompressed, cross-origin isolated (COOP/COEP) so performance.now() is precise.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "pling serve: unexpected arguments %q\n", fl.Args())
		return 2
	}
	if *quality < 0 || *quality > brotli.BestCompression {
		fmt.Fprintf(stderr, "pling serve: --brotli must be 0–11, not %d\n", *quality)
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	module, source := site.Module(), "embedded"
	if *dist != "" {
		module, source = os.DirFS(*dist), *dist
		if _, err := fs.Stat(module, "pling.wasm"); err != nil {
			fmt.Fprintf(stderr, "pling serve: --dist %s has no pling.wasm: run make wasm\n", *dist)
			return 2
		}
	}
	start := time.Now()
	srv, err := newServer(ctx, module, site.Demo(), serveOptions{brotli: *quality})
	if err != nil {
		fmt.Fprintf(stderr, "pling serve: %v\n", err)
		return 1
	}
	if len(srv.missing) > 0 {
		fmt.Fprintf(stderr, "pling serve: the module is not built into this binary (missing %s).\n"+
			"  /pling/ answers 503 until you run make wasm and rebuild pling, or start with --dist dist.\n",
			strings.Join(srv.missing, ", "))
	} else {
		fmt.Fprintf(stdout, "pling serve: module from %s, prepared in %v\n", source, time.Since(start).Round(time.Millisecond))
		for _, name := range moduleFiles {
			fmt.Fprintf(stdout, "  %s\n", srv.files["/pling/"+name].sizes())
		}
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "pling serve: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "pling serve: http://%s/ (shop/, orders/, settings/)\n", ln.Addr())
	if len(srv.late) > 0 {
		go func() {
			<-srv.upgraded
			if ctx.Err() == nil {
				for _, f := range srv.late {
					fmt.Fprintf(stdout, "pling serve: brotli quality %d ready: %s\n", *quality, f.sizes())
				}
			}
		}()
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "pling serve: %v\n", err)
		return 1
	}
	return 0
}

// moduleFiles are the files served under /pling/, in the order the start
// message lists them.
var moduleFiles = []string{"pling.js", "ui.js", "webmcp.js", "wasm_exec.js", "pling.wasm"}

type serveOptions struct {
	// brotli is the target brotli quality (0–11).
	brotli int
}

// server serves the demo site and the module. Every file is read and
// compressed once, when the server is built; requests only pick bytes.
type server struct {
	files   map[string]*servedFile // URL path → file
	missing []string               // module files that are not there
	// late are the files whose brotli is upgraded in the background;
	// upgraded is closed when that is done.
	late     []*servedFile
	upgraded chan struct{}
}

// servedFile is one file with its precompressed representations.
type servedFile struct {
	name, ctype, cache, corp string
	raw                      []byte
	hash                     string // hex SHA-256 prefix of raw: the ETag
	gz                       []byte // nil when gzip does not pay
	br                       atomic.Pointer[encoded]
	compressible             bool
}

// encoded is a compressed body and the ETag suffix naming its bytes.
type encoded struct {
	body []byte
	tag  string
}

// bigFile is the size above which brotli starts at a fast quality and is
// upgraded in the background: quality 11 takes tens of seconds on a
// multi-megabyte pling.wasm, quality 5 a second or two for ~15% more bytes.
const (
	bigFile     = 1 << 20
	fastQuality = 5
)

func newServer(ctx context.Context, module, demo fs.FS, opt serveOptions) (*server, error) {
	s := &server{files: map[string]*servedFile{}, upgraded: make(chan struct{})}
	for _, name := range moduleFiles {
		b, err := fs.ReadFile(module, name)
		if errors.Is(err, fs.ErrNotExist) {
			s.missing = append(s.missing, name)
			continue
		}
		if err != nil {
			return nil, err
		}
		// The module is meant to be loaded by other origins' pages too
		// (an app's dev server pointing at pling serve), so it may be
		// embedded cross-origin even by a cross-origin isolated page.
		s.files["/pling/"+name] = &servedFile{name: name, raw: b, cache: "public, max-age=300", corp: "cross-origin"}
	}
	err := fs.WalkDir(demo, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(demo, p)
		if err != nil {
			return err
		}
		// Pages revalidate every time (a 304 is cheap); the ETag still
		// saves the bytes.
		s.files["/"+p] = &servedFile{name: p, raw: b, cache: "no-cache", corp: "same-origin"}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("demo site: %w", err)
	}

	var wg sync.WaitGroup
	for _, f := range s.files {
		f.ctype = contentType(f.name)
		f.compressible = compressible(f.ctype)
		sum := sha256.Sum256(f.raw)
		f.hash = hex.EncodeToString(sum[:12])
		if !f.compressible || len(f.raw) < 512 {
			continue
		}
		q := opt.brotli
		if len(f.raw) > bigFile && q > fastQuality {
			q = fastQuality
			s.late = append(s.late, f)
		}
		wg.Add(2)
		go func() { defer wg.Done(); f.gz = smaller(gzipBytes(f.raw), f.raw) }()
		go func() {
			defer wg.Done()
			if b := smaller(brotliBytes(ctx, f.raw, q), f.raw); b != nil {
				f.br.Store(&encoded{b, "-br" + strconv.Itoa(q)})
			}
		}()
	}
	wg.Wait()
	go func() {
		defer close(s.upgraded)
		for _, f := range s.late {
			if b := smaller(brotliBytes(ctx, f.raw, opt.brotli), f.raw); b != nil && ctx.Err() == nil {
				f.br.Store(&encoded{b, "-br" + strconv.Itoa(opt.brotli)})
			}
		}
	}()
	return s, nil
}

// gzipBytes compresses b; level 9 gains under 1% over the default on
// pling.wasm for twice the time, so big files get the default.
func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	level := gzip.BestCompression
	if len(b) > bigFile {
		level = gzip.DefaultCompression
	}
	w, _ := gzip.NewWriterLevel(&out, level)
	_, _ = w.Write(b)
	_ = w.Close()
	return out.Bytes()
}

// brotliBytes compresses b, in chunks so that a cancelled server stops a
// long background compression; it returns nil when ctx ends first.
func brotliBytes(ctx context.Context, b []byte, quality int) []byte {
	var out bytes.Buffer
	// The window need not be larger than the file; a small one makes
	// quality 11 fast on small files.
	lgwin := min(max(bits.Len(uint(len(b))), 10), 24)
	w := brotli.NewWriterOptions(&out, brotli.WriterOptions{Quality: quality, LGWin: lgwin})
	for len(b) > 0 {
		if ctx.Err() != nil {
			return nil
		}
		n := min(len(b), 256<<10)
		_, _ = w.Write(b[:n])
		b = b[n:]
	}
	_ = w.Close()
	return out.Bytes()
}

// smaller keeps a compressed body only when it saves bytes.
func smaller(c, raw []byte) []byte {
	if c == nil || len(c) >= len(raw) {
		return nil
	}
	return c
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".wasm":
		return "application/wasm"
	case ".json":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".txt", ".md":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || ctype == "application/wasm" ||
		ctype == "application/json" || ctype == "image/svg+xml"
}

func (f *servedFile) sizes() string {
	s := fmt.Sprintf("%-12s %9d bytes", f.name, len(f.raw))
	if e := f.br.Load(); e != nil {
		s += fmt.Sprintf(", brotli %d", len(e.body))
	}
	if f.gz != nil {
		s += fmt.Sprintf(", gzip %d", len(f.gz))
	}
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Cross-origin isolation: performance.now() gets its fine resolution
	// (and SharedArrayBuffer is available) on every page of the site.
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Embedder-Policy", "require-corp")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := path.Clean("/" + r.URL.Path)
	if strings.HasSuffix(r.URL.Path, "/") && p != "/" {
		p += "/"
	}
	if strings.HasPrefix(p, "/pling/") {
		name := strings.TrimPrefix(p, "/pling/")
		if f := s.files[p]; f != nil {
			s.serveFile(w, r, f)
			return
		}
		for _, m := range s.missing {
			if m == name {
				h.Set("Cache-Control", "no-store")
				http.Error(w, "pling: "+name+" is not built into this pling binary: run make wasm and rebuild pling, or start pling serve with --dist dist", http.StatusServiceUnavailable)
				return
			}
		}
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(p, "/") {
		p += "index.html"
	} else if _, ok := s.files[p+"/index.html"]; ok {
		target := p + "/"
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusMovedPermanently)
		return
	}
	f := s.files[p]
	if f == nil {
		http.NotFound(w, r)
		return
	}
	s.serveFile(w, r, f)
}

func (s *server) serveFile(w http.ResponseWriter, r *http.Request, f *servedFile) {
	h := w.Header()
	body, encoding, tag := f.raw, "", ""
	if f.compressible {
		h.Set("Vary", "Accept-Encoding")
		br := f.br.Load()
		switch negotiate(r.Header.Get("Accept-Encoding"), br != nil, f.gz != nil) {
		case "br":
			body, encoding, tag = br.body, "br", br.tag
		case "gzip":
			body, encoding, tag = f.gz, "gzip", "-gz"
		}
	}
	etag := `"` + f.hash + tag + `"`
	h.Set("Content-Type", f.ctype)
	h.Set("ETag", etag)
	h.Set("Cache-Control", f.cache)
	h.Set("Cross-Origin-Resource-Policy", f.corp)
	if encoding != "" {
		h.Set("Content-Encoding", encoding)
	}
	if noneMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// negotiate picks the content coding from Accept-Encoding (RFC 9110
// §12.5.3): the highest q above zero among those available, brotli before
// gzip before identity on a tie. identity not named is acceptable but
// least preferred.
func negotiate(accept string, haveBr, haveGzip bool) string {
	q := map[string]float64{}
	star := -1.0
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		v := 1.0
		for _, p := range strings.Split(params, ";") {
			k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					v = f
				}
			}
		}
		if name == "*" {
			star = v
		} else {
			q[name] = v
		}
	}
	weight := func(name string) float64 {
		if v, ok := q[name]; ok {
			return v
		}
		if star >= 0 {
			return star
		}
		if name == "identity" {
			return 0.0001
		}
		return 0
	}
	type option struct {
		name string
		ok   bool
	}
	best, bestQ := "identity", weight("identity")
	for _, o := range []option{{"gzip", haveGzip}, {"br", haveBr}} {
		if w := weight(o.name); o.ok && w > 0 && w >= bestQ {
			best, bestQ = o.name, w
		}
	}
	return best
}

// noneMatch reports whether If-None-Match names etag (weak comparison, as
// RFC 9110 §13.1.2 asks for this header).
func noneMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
