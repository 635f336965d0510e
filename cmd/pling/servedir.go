package main

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/pling-go/pling/plinghttp"
)

// dirHandler is pling serve --dir: the files of dir as a static site, and
// Pling beside them under /pling/ (package plinghttp, what any Go site
// mounts), so a page of one's own loads /pling/pling.js as the docs show.
// Paths with a segment that starts with "." (.git, .env) are not served;
// DIR is opened as an os.Root, so a symbolic link that leads out of it is
// not followed; a directory is served by its index.html, never listed.
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
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	rootFS := rootedFS{root.FS()}
	files := http.FileServerFS(rootFS)
	mux := http.NewServeMux()
	mux.Handle("/pling/", ph)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, seg := range strings.Split(r.URL.Path, "/") {
			if strings.HasPrefix(seg, ".") {
				http.NotFound(w, r)
				return
			}
		}
		if name := strings.Trim(r.URL.Path, "/"); strings.HasSuffix(r.URL.Path, "/") || name == "" {
			if name == "" {
				name = "."
			}
			if _, err := fs.Stat(rootFS, path.Join(name, "index.html")); err != nil {
				http.NotFound(w, r) // no listing: it would name the dot files
				return
			}
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		// No other site may frame these pages: an approval dialog under
		// another site's overlay is clickjacking (docs/hosts.md).
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
		files.ServeHTTP(w, r)
	}))
	return mux, ph, nil
}

// rootedFS answers a path that escapes the root (a symbolic link leading
// out of DIR) as one that does not exist, so the file server says 404
// rather than 500.
type rootedFS struct{ fs.FS }

func (r rootedFS) Open(name string) (fs.File, error) {
	f, err := r.FS.Open(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return f, err
}
