// Package site holds what "pling serve" serves: the demo pages and the
// built module (pling.wasm, wasm_exec.js and the shim), embedded in the
// binary. The pages' shared head and header are written once
// (layout.html) and rendered into each page when the site is first used
// (internal/sitepages).
//
// The module is embedded from dist/, which make wasm fills. The directory
// always exists in git (it holds a committed .keep; the built files are
// ignored), so a fresh clone builds before any make step and the server
// reports the module as missing instead of failing to compile.
package site

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/pling-go/pling/internal/sitepages"
)

//go:embed all:dist
var dist embed.FS

//go:embed demo
var demo embed.FS

// layout is the demo pages' shared head and header.
//
//go:embed layout.html
var layout string

// pages are the rendered demo site (Demo).
var pages = sync.OnceValue(func() fs.FS {
	p, err := sitepages.Render(sub(demo, "demo"), layout)
	if err != nil {
		panic(err) // the embedded pages are tested (TestDemoPages)
	}
	return p
})

// Module is the embedded module directory: pling.wasm, wasm_exec.js,
// pling.js, ui.js and webmcp.js when make wasm has run, else only .keep.
func Module() fs.FS { return sub(dist, "dist") }

// Demo is the demo site: index.html, shop/, orders/, settings/,
// checkout/, assets/, each page rendered with the shared layout
// (internal/sitepages).
func Demo() fs.FS { return pages() }

func sub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the directory is embedded above; it cannot be missing
	}
	return s
}
