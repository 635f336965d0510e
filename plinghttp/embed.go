package plinghttp

import (
	"embed"
	"io/fs"
)

// embedded is the module as make wasm copies it into plinghttp/dist/. The
// directory holds only a committed .keep in git (the built files are
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
// It compresses the files when called, so call it once, at start.
func Handler(opts ...Option) *Server {
	h, err := New(Embedded(), opts...)
	if err != nil {
		panic(err) // only a bad option: a programming error
	}
	return h
}
