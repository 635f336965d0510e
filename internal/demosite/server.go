// Package demosite is the HTTP handler of "pling serve": the demo site
// and the module under /pling/, every file read and compressed once when
// the server is built, cross-origin isolated (COOP/COEP). It is a package
// of its own so that tests outside the command (e2e's browser tests) run
// the very server a person runs.
package demosite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pling-go/pling/internal/demosite/site"
	"github.com/pling-go/pling/internal/precompress"
)

// Demo is the demo site embedded in the pling command: index.html, shop/,
// orders/, settings/, assets/.
func Demo() fs.FS { return site.Demo() }

// Module is the module embedded in the pling command (pling.wasm and the
// loader files when make wasm ran before the build, else nothing).
func Module() fs.FS { return site.Module() }

// ModuleFiles are the files served under /pling/, in the order the start
// message of pling serve lists them.
var ModuleFiles = []string{"pling.js", "ui.js", "webmcp.js", "wasm_exec.js", "pling.wasm"}

// Options configure New.
type Options struct {
	// Brotli is the target brotli quality (0–11).
	Brotli int
	// CSP is the Content-Security-Policy of the HTML pages; "" is
	// DefaultCSP.
	CSP string
	// Authority, when set, is the base URL of the delegation authority
	// the demo pages follow (docs/authority.md "Pages that follow the
	// authority"): each page's pling.js script tag carries it as
	// data-authority, and the default CSP's connect-src allows its origin,
	// so the pages fetch its keys and revocation feed themselves.
	Authority string
}

// DefaultCSP is the Content-Security-Policy of the demo pages: scripts
// only from the site itself (no inline or eval'd script, the demo has
// none), the module compiled with 'wasm-unsafe-eval', inline styles (the
// pages and the handoff dialog use them; they cannot run code), and no
// framing, so no other site can overlay the approval dialog (RATIONALE.md
// "What does pling serve send to keep pages safe?").
const DefaultCSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Server serves the demo site and the module. Every file is read and
// compressed once, when the server is built; requests only pick bytes.
type Server struct {
	files   map[string]*servedFile // URL path → file
	missing []string               // module files that are not there
	// late are the files whose brotli is upgraded in the background;
	// upgraded is closed when that is done.
	late     []*servedFile
	upgraded chan struct{}
	csp      string // of the HTML pages
	// authority is the base URL of the authority the pages follow, whose
	// screens ConsentPath and ApprovalPath lead to.
	authority string
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

// fastQuality is the brotli quality a big file (precompress.BigFile)
// starts at, upgraded in the background: quality 11 takes tens of seconds
// on a multi-megabyte pling.wasm, quality 5 a second or two for ~15% more
// bytes.
const fastQuality = 5

// New builds the server from the module directory (pling.wasm,
// wasm_exec.js and the shim; a missing file is answered with 503) and the
// demo site. ctx bounds the background brotli upgrade of big files.
func New(ctx context.Context, module, demo fs.FS, opt Options) (*Server, error) {
	s := &Server{files: map[string]*servedFile{}, upgraded: make(chan struct{}), csp: opt.CSP}
	if s.csp == "" {
		s.csp = DefaultCSP
	}
	var followAttr []byte
	if opt.Authority != "" {
		origin, err := authorityOrigin(opt.Authority)
		if err != nil {
			return nil, err
		}
		if opt.CSP == "" {
			s.csp = strings.Replace(DefaultCSP, "connect-src 'self'", "connect-src 'self' "+origin, 1)
		}
		s.authority = strings.TrimRight(opt.Authority, "/")
		followAttr = []byte(` data-authority="` + html.EscapeString(strings.TrimRight(opt.Authority, "/")) + `"`)
	}
	for _, name := range ModuleFiles {
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
		f := &servedFile{name: name, raw: b, cache: "public, max-age=300", corp: "cross-origin"}
		// The forms make wasm built beside the file: the server answers
		// at once instead of compressing the module when it starts.
		br, gz := precompress.Built(module, name, b)
		if br != nil {
			f.br.Store(&encoded{br, "-brb"})
		}
		f.gz = gz
		s.files["/pling/"+name] = f
	}
	err := fs.WalkDir(demo, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(demo, p)
		if err != nil {
			return err
		}
		if followAttr != nil && strings.HasSuffix(p, ".html") {
			b = bytes.Replace(b, moduleTag, append(slices.Clip(moduleTag), followAttr...), 1)
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
		f.ctype = precompress.ContentType(f.name)
		f.compressible = precompress.Compressible(f.ctype)
		sum := sha256.Sum256(f.raw)
		f.hash = hex.EncodeToString(sum[:12])
		if !f.compressible || len(f.raw) < 512 {
			continue
		}
		if f.gz == nil {
			wg.Add(1)
			go func() { defer wg.Done(); f.gz = precompress.Smaller(precompress.Gzip(f.raw), f.raw) }()
		}
		if f.br.Load() != nil {
			continue
		}
		q := opt.Brotli
		if len(f.raw) > precompress.BigFile && q > fastQuality {
			q = fastQuality
			s.late = append(s.late, f)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b := precompress.Smaller(precompress.Brotli(ctx, f.raw, q), f.raw); b != nil {
				f.br.Store(&encoded{b, "-br" + strconv.Itoa(q)})
			}
		}()
	}
	wg.Wait()
	go func() {
		defer close(s.upgraded)
		for _, f := range s.late {
			if b := precompress.Smaller(precompress.Brotli(ctx, f.raw, opt.Brotli), f.raw); b != nil && ctx.Err() == nil {
				f.br.Store(&encoded{b, "-br" + strconv.Itoa(opt.Brotli)})
			}
		}
	}()
	return s, nil
}

// Missing lists the module files that were not found.
func (s *Server) Missing() []string { return s.missing }

// Sizes describes a served file, a module file by its name (one of
// ModuleFiles) or a page by its path in the demo site: its size raw and
// compressed; "" when there is no such file.
func (s *Server) Sizes(name string) string {
	f := s.files["/pling/"+name]
	if f == nil {
		f = s.files["/"+name]
	}
	if f == nil {
		return ""
	}
	return f.sizes()
}

// Upgrading lists the files (as Sizes names them) whose brotli is upgraded
// in the background to the requested quality.
func (s *Server) Upgrading() []string {
	var names []string
	for _, f := range s.late {
		names = append(names, f.name)
	}
	return names
}

// Upgraded is closed when the background brotli upgrade is over.
func (s *Server) Upgraded() <-chan struct{} { return s.upgraded }

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

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Cross-origin isolation: performance.now() gets its fine resolution
	// (and SharedArrayBuffer is available) on every page of the site.
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Embedder-Policy", "require-corp")
	h.Set("X-Content-Type-Options", "nosniff")
	if to, ok := screens[r.URL.Path]; ok && s.authority != "" {
		// The screens a person decides on are the authority's, on its
		// own origin, where no script of these pages can read or post
		// them (docs/authority.md "Who can decide"): the site only
		// points there.
		u := s.authority + to
		if r.URL.RawQuery != "" {
			u += "?" + r.URL.RawQuery
		}
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		http.Redirect(w, r, u, http.StatusSeeOther)
		return
	}
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

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, f *servedFile) {
	h := w.Header()
	body, encoding, tag := f.raw, "", ""
	if f.compressible {
		h.Set("Vary", "Accept-Encoding")
		br := f.br.Load()
		switch precompress.Negotiate(r.Header.Get("Accept-Encoding"), br != nil, f.gz != nil) {
		case "br":
			body, encoding, tag = br.body, "br", br.tag
		case "gzip":
			body, encoding, tag = f.gz, "gzip", "-gz"
		}
	}
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", f.cache)
	h.Set("Cross-Origin-Resource-Policy", f.corp)
	if f.corp == "cross-origin" {
		// A page on another origin fetches pling.wasm with CORS (fetch,
		// instantiateStreaming); the files are public and sent without
		// credentials.
		h.Set("Access-Control-Allow-Origin", "*")
	}
	if strings.HasPrefix(f.ctype, "text/html") {
		h.Set("Content-Security-Policy", s.csp)
		if strings.Contains(s.csp, "frame-ancestors 'none'") {
			h.Set("X-Frame-Options", "DENY") // for browsers without CSP frame-ancestors
		}
	}
	precompress.Write(w, r, body, encoding, `"`+f.hash+tag+`"`)
}
