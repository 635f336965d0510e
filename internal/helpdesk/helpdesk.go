// Package helpdesk is a second site that speaks Pling, written from the
// docs alone and unlike the demo: a help desk with 1,000 tickets (search,
// pagination, a close button per open row), a ticket's own page (replies
// checked by page script, a priority, an escalation dialog), customers
// (a form checked by page script) and a settings form whose inputs are
// all prefilled and required, linked by one navigation bar. Its pages are
// embedded and served as static files, their shared head and navigation
// written once (layout.html, rendered when the site is first used:
// internal/sitepages); state lives in the browser's localStorage. The
// agent task suite that drives it through pling mcp is in agent/mcp
// (TestHelpdeskTasks).
package helpdesk

import (
	"embed"
	"io/fs"
	"net/http"
	"sync"

	"github.com/pling-go/pling/internal/sitepages"
	"github.com/pling-go/pling/plinghttp"
)

//go:embed site
var site embed.FS

// layout is the pages' shared head, header and navigation.
//
//go:embed layout.html
var layout string

// pages are the rendered pages (Pages).
var pages = sync.OnceValue(func() fs.FS {
	s, err := fs.Sub(site, "site")
	if err != nil {
		panic(err) // embedded above
	}
	p, err := sitepages.Render(s, layout)
	if err != nil {
		panic(err) // the embedded pages are tested (TestPages)
	}
	return p
})

// Pages is the site: index.html, tickets/, customers/, admin/, assets/,
// each page rendered with the shared layout (internal/sitepages).
func Pages() fs.FS { return pages() }

// New serves the help desk, with Pling's files from module (a directory
// make wasm filled: pling.js, pling.wasm, …) under /pling/; opts go to
// plinghttp.New.
func New(module fs.FS, opts ...plinghttp.Option) (http.Handler, error) {
	p, err := plinghttp.New(module, opts...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/pling/", p)
	mux.Handle("/", http.FileServerFS(Pages()))
	return mux, nil
}
