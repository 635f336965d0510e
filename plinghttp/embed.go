package plinghttp

import (
	"embed"
	"io/fs"
	"log/slog"
	"strings"
)

// embedded is the module as make wasm copies it into plinghttp/dist/,
// with its brotli and gzip forms (NAME.br, NAME.gz). The directory holds
// only a committed .keep in git (the built files are
// ignored), so a fresh clone builds; Handler then answers 503 for the
// module until make wasm runs (RATIONALE "Why is the module embedded from
// a directory that holds only `.keep` in git?").
//
//go:embed all:dist
var embedded embed.FS

// Embedded is the directory embedded in this package at build time.
func Embedded() fs.FS {
	d, err := fs.Sub(embedded, "dist")
	if err != nil {
		panic(err) // embedded above: it cannot be missing
	}
	return d
}

// Handler serves the files embedded at build time, with the default
// options (WithAllowOrigin("*")) and opts; mount it under a prefix:
//
//	mux.Handle("/pling/", plinghttp.Handler())
//
// It reads the files and the compressed forms make wasm built beside them
// when called, so call it once, at start; it compresses nothing then.
//
// A build of this package without the module (a module fetched with go
// get, or a checkout where make wasm has not run: plinghttp/dist holds
// only .keep in git) logs an error at once on slog.Default (or
// WithLogger) saying so and what to do, and each request for a missing
// file is answered 503 with the same reason, logged again the first time.
func Handler(opts ...Option) *Server {
	h, err := New(Embedded(), opts...)
	if err != nil {
		panic(err) // only a bad option: a programming error
	}
	if len(h.missing) > 0 {
		h.logger().Error("plinghttp: "+notBuilt, slog.String("missing", strings.Join(h.missing, " ")))
	}
	return h
}

// notBuilt says why a required file is absent and how to get it.
const notBuilt = "the Pling module is not embedded in this build: plinghttp.Handler serves what `make wasm` copied into plinghttp/dist of the checkout it was built from, and a module fetched with go get has none. Build it (git clone the repository, make wasm, and depend on that checkout with a replace directive: docs/getting-started.md §4), or serve a directory that has the files with plinghttp.New(os.DirFS(dir))"
