// Package plinghttp serves Pling's page files — the shim (pling.js, its
// ES module entry pling.mjs, the inline stub stub.js), the default dialog
// ui.js, the WebMCP mirror webmcp.js, wasm_exec.js and the module
// pling.wasm — from any Go HTTP server, in one line:
//
//	mux.Handle("/pling/", plinghttp.Handler())
//
// Each file is read once, when the handler is built, with the brotli and
// gzip forms make wasm built beside it (NAME.br, NAME.gz; a file without
// them is compressed then); requests only pick bytes. Every answer has its Content-Type
// (application/wasm for the module), a strong ETag per encoding (a matching
// If-None-Match gets 304), Cache-Control (immutable for the content-hashed
// names of Hashed, revalidate for the plain ones), and CORS and
// Cross-Origin-Resource-Policy headers so pages on other origins, cross-
// origin isolated ones too, may load them (docs/hosts.md §6).
//
// The handler serves a file by the last element of the request path, so it
// can be mounted under any prefix. Integrity gives the Subresource
// Integrity value of each file for a script tag.
package plinghttp

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"

	"github.com/pling-go/pling/internal/precompress"
)

// Files are the files a handler serves, when its directory has them.
// pling.js and pling.wasm are required; the others are served when present.
var Files = []string{"pling.js", "pling.mjs", "stub.js", "ui.js", "webmcp.js", "wasm_exec.js", "pling.wasm"}

var required = []string{"pling.js", "pling.wasm", "wasm_exec.js"}

// Option configures New.
type Option func(*options)

type options struct {
	allowOrigin string
	brotli      int
	bigBrotli   int
	logger      *slog.Logger
}

// WithLogger sets where the handler reports a module that is not built
// (Handler, and the first request for a missing file); the default is
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithAllowOrigin sets Access-Control-Allow-Origin; the default is "*",
// since the files are public and fetched without credentials. "" sends no
// CORS header (same-origin pages only).
func WithAllowOrigin(origin string) Option { return func(o *options) { o.allowOrigin = origin } }

// WithBrotli sets the brotli quality (0–11) of files up to 1 MiB and of
// larger ones (over precompress.BigFile, pling.wasm): quality 11 takes tens of seconds on the
// module, so its default is 6 (about 10% larger, a second or two).
func WithBrotli(small, big int) Option {
	return func(o *options) { o.brotli, o.bigBrotli = small, big }
}

// A Server serves the files of one directory.
type Server struct {
	files       map[string]*file // by served name: plain and hashed
	missing     []string         // required files that are not there
	allowOrigin string
	log         *slog.Logger
	warnMissing sync.Once
}

func (h *Server) logger() *slog.Logger {
	if h.log != nil {
		return h.log
	}
	return slog.Default()
}

type file struct {
	name, ctype, cache string
	raw, gz, br        []byte
	etag               string // quoted, of raw; encodings add a suffix
	integrity          string // sha384-…
	hashed             string // name with the content hash
}

// New builds a handler over dir, which holds the Files (as make wasm
// writes them into dist/, or an npm package's files). A required file that
// is missing is answered with 503 and listed by Missing.
func New(dir fs.FS, opts ...Option) (*Server, error) {
	o := options{allowOrigin: "*", brotli: brotli.BestCompression, bigBrotli: 6}
	for _, f := range opts {
		f(&o)
	}
	if o.brotli < 0 || o.brotli > 11 || o.bigBrotli < 0 || o.bigBrotli > 11 {
		return nil, fmt.Errorf("plinghttp: brotli quality must be 0–11, not %d/%d", o.brotli, o.bigBrotli)
	}
	h := &Server{files: map[string]*file{}, allowOrigin: o.allowOrigin, log: o.logger}
	var list []*file
	for _, name := range Files {
		b, err := fs.ReadFile(dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			for _, r := range required {
				if r == name {
					h.missing = append(h.missing, name)
				}
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("plinghttp: %w", err)
		}
		sum := sha256.Sum256(b)
		hash := hex.EncodeToString(sum[:6])
		sri := sha512.Sum384(b)
		ext := path.Ext(name)
		f := &file{name: name, ctype: precompress.ContentType(name), raw: b, etag: `"` + hex.EncodeToString(sum[:12]),
			integrity: "sha384-" + base64.StdEncoding.EncodeToString(sri[:]),
			hashed:    strings.TrimSuffix(name, ext) + "." + hash + ext}
		list = append(list, f)
	}
	var wg sync.WaitGroup
	for _, f := range list {
		q := o.brotli
		if len(f.raw) > precompress.BigFile {
			q = o.bigBrotli
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Only a form make wasm did not build beside the file (or
			// built for other bytes) is compressed here: a directory of
			// another origin, an npm package's files.
			f.br, f.gz = precompress.Built(dir, f.name, f.raw)
			if f.gz == nil {
				f.gz = precompress.Smaller(precompress.Gzip(f.raw), f.raw)
			}
			if f.br == nil {
				f.br = precompress.Smaller(precompress.Brotli(context.Background(), f.raw, q), f.raw)
			}
		}()
	}
	wg.Wait()
	for _, f := range list {
		plain, hashed := *f, *f
		plain.cache = "public, no-cache" // revalidate: the ETag makes that a 304
		hashed.cache = "public, max-age=31536000, immutable"
		h.files[f.name] = &plain
		h.files[f.hashed] = &hashed
	}
	return h, nil
}

// Missing lists the required files the directory lacks.
func (h *Server) Missing() []string { return append([]string(nil), h.missing...) }

// Hashed is the content-addressed name of a file ("pling.1a2b3c4d5e6f.wasm"),
// served with Cache-Control immutable; "" when there is no such file.
func (h *Server) Hashed(name string) string {
	if f := h.files[name]; f != nil {
		return f.hashed
	}
	return ""
}

// Integrity is the Subresource Integrity value (sha384-…) of a file, for
// the integrity attribute of its script tag (and data-wasm-integrity for
// the module); "" when there is no such file.
func (h *Server) Integrity(name string) string {
	if f := h.files[name]; f != nil {
		return f.integrity
	}
	return ""
}

// Integrities maps each served file (by its plain name) to its Integrity,
// as make wasm writes dist/sri.json.
func (h *Server) Integrities() map[string]string {
	out := map[string]string{}
	for _, name := range Files {
		if f := h.files[name]; f != nil {
			out[name] = f.integrity
		}
	}
	return out
}

func (h *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	// The files are public and carry no credentials: any page may embed
	// them, a cross-origin isolated one (COEP require-corp) too.
	hd.Set("Cross-Origin-Resource-Policy", "cross-origin")
	if h.allowOrigin != "" {
		hd.Set("Access-Control-Allow-Origin", h.allowOrigin)
		if h.allowOrigin != "*" {
			hd.Add("Vary", "Origin")
		}
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		hd.Set("Access-Control-Allow-Methods", "GET, HEAD")
		hd.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		hd.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := path.Base(r.URL.Path)
	f := h.files[name]
	if f == nil {
		for _, m := range h.missing {
			if m == name {
				hd.Set("Cache-Control", "no-store")
				h.warnMissing.Do(func() {
					h.logger().Error("plinghttp: a page asked for "+name+", which is missing: "+notBuilt, slog.String("missing", strings.Join(h.missing, " ")))
				})
				http.Error(w, "pling: "+name+" is missing: "+notBuilt, http.StatusServiceUnavailable)
				return
			}
		}
		http.NotFound(w, r)
		return
	}
	body, enc, tag := f.raw, "", ""
	hd.Add("Vary", "Accept-Encoding")
	switch precompress.Negotiate(r.Header.Get("Accept-Encoding"), f.br != nil, f.gz != nil) {
	case "br":
		body, enc, tag = f.br, "br", "-br"
	case "gzip":
		body, enc, tag = f.gz, "gzip", "-gz"
	}
	hd.Set("Content-Type", f.ctype)
	hd.Set("Cache-Control", f.cache)
	precompress.Write(w, r, body, enc, f.etag+tag+`"`)
}
