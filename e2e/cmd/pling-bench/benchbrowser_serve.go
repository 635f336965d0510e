package main

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/pling-go/pling/internal/demosite"
)

// bbPages are the pages pling-bench browser measures, served on loopback
// by the handler of pling serve with the bench pages and the caching
// experiments' copies of the module beside the demo site.
type bbPages struct {
	base        string // http://127.0.0.1:PORT
	mux         *http.ServeMux
	experiments []cachingExperiment
	close       func()
}

// serveBenchPages serves the module of dist ("" the embedded copy) and
// the polyfill poly, brotli quality, until ctx ends or close is called,
// and records the scripts' sizes in rep.
func serveBenchPages(ctx context.Context, dist string, poly []byte, quality int, rep *bbReport, progress func(string, ...any)) (*bbPages, error) {
	module := demosite.Module()
	if dist != "" {
		module = os.DirFS(dist)
	}
	wasm, err := fs.ReadFile(module, "pling.wasm")
	if err != nil {
		return nil, fmt.Errorf("%w (run make wasm)", err)
	}
	// The bench pages (and the polyfill) join the demo site, so the very
	// handler of pling serve serves them with the demo pages' headers.
	demo, err := benchDemo(demosite.Demo(), poly)
	if err != nil {
		return nil, err
	}
	progress("compressing the module (brotli %d, as pling serve does)", quality)
	srv, err := demosite.New(ctx, module, demo, demosite.Options{Brotli: quality,
		// The bench pages time inline script in same-origin iframes, which
		// the demo's policy forbids; they measure, they are not deployed.
		CSP: "frame-ancestors 'self'"})
	if err != nil {
		return nil, err
	}
	if missing := srv.Missing(); len(missing) > 0 {
		return nil, fmt.Errorf("the module directory lacks %s (run make wasm)", strings.Join(missing, ", "))
	}
	<-srv.Upgraded()
	experiments := cachingExperiments()
	exp, err := newExperimentFiles(wasm, experiments)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/bench/wasm/", exp)
	mux.Handle("/", srv)

	rep.Scripts.ModuleBrotliQ = quality
	for _, f := range []struct {
		fsys fs.FS
		name string
		s    *bbSizes
	}{{module, "pling.js", &rep.Scripts.Shim}, {demo, "bench/webmcp-polyfill.js", &rep.Scripts.Polyfill}, {module, "pling.wasm", &rep.Scripts.ModuleSizes}, {module, "wasm_exec.js", &rep.Scripts.WasmExecSizes}} {
		b, err := fs.ReadFile(f.fsys, f.name)
		if err != nil {
			return nil, err
		}
		*f.s = compressedSizes(b, quality)
	}

	base, stop, err := serveLoopback(mux)
	if err != nil {
		return nil, err
	}
	return &bbPages{base: base, mux: mux, experiments: experiments, close: stop}, nil
}

// writeBenchBrowser writes the report as JSON to out, the ARIA snapshots
// it measured beside it, and its chart (returning the chart's path).
func writeBenchBrowser(out string, rep *bbReport, ran map[string]bool) (string, error) {
	stem, err := writeArtifact(out, rep)
	if err != nil {
		return "", err
	}
	if ran["snapshot"] {
		// The ARIA snapshots the byte counts are of, for a reader to see.
		for name, pg := range map[string]bbSnapshotPage{"virtualized": rep.Snapshot.Virtualized, "all-rows": rep.Snapshot.AllRows} {
			if err := os.WriteFile(stem+".aria-"+name+".txt", []byte(pg.AXText), 0o644); err != nil {
				return "", err
			}
		}
	}
	svgPath := stem + ".svg"
	sf, err := os.Create(svgPath)
	if err != nil {
		return "", err
	}
	err = writeBenchSVG(sf, fmt.Sprintf("pling-bench browser: %s, figure ÷ target", rep.Browser), rep.Targets)
	if cerr := sf.Close(); err == nil {
		err = cerr
	}
	return svgPath, err
}
