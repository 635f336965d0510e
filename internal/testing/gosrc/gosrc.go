// Package gosrc reads a package's own Go sources for the tests that
// check them as text or syntax: the exported API, the metrics the docs
// must name, the test hooks that must not be exported, the schema types
// copied for a build.
package gosrc

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// File is one Go source file of a package: its base name and its bytes.
type File struct {
	Name string
	Src  []byte
}

// Package returns the non-test .go files in dir, whatever their build
// tags, sorted by name. An unreadable directory or file, or a directory
// without Go files, ends the test.
func Package(t testing.TB, dir string) []File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, File{Name: n, Src: src})
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files
}
