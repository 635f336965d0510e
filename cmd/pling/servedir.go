package main

import (
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/pling-go/pling/plinghttp"
)

// dirHandler is pling serve --dir: the files of dir as a static site, and
// Pling beside them under /pling/ (package plinghttp, what any Go site
// mounts), so a page of one's own loads /pling/pling.js as the docs show.
// Paths with a segment that starts with "." (.git, .env) are not served.
func dirHandler(module fs.FS, dir string, quality int) (http.Handler, *plinghttp.Server, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !st.IsDir() {
		return nil, nil, &targetError{dir + " is not a directory"}
	}
	ph, err := plinghttp.New(module, plinghttp.WithBrotli(quality, min(quality, 6)))
	if err != nil {
		return nil, nil, err
	}
	files := http.FileServerFS(os.DirFS(dir))
	mux := http.NewServeMux()
	mux.Handle("/pling/", ph)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, seg := range strings.Split(r.URL.Path, "/") {
			if strings.HasPrefix(seg, ".") {
				http.NotFound(w, r)
				return
			}
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	return mux, ph, nil
}
