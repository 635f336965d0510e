//go:build !js

package main

import (
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSFilesAreFenced checks that every Go file of the bridge carries
// //go:build js && wasm, so all syscall/js use stays behind the fence
// (docs/style.md "Keep the JS boundary fenced") and native builds skip it.
func TestJSFilesAreFenced(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if f == "tags_test.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !fencedJS(string(src)) {
			t.Errorf("%s: missing //go:build js && wasm", f)
		}
		checked++
		// syscall/js is used only through safejs.
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			if im.Path.Value == `"syscall/js"` {
				t.Errorf("%s imports syscall/js directly; go through github.com/hack-pad/safejs", f)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no bridge files found")
	}
}

func fencedJS(src string) bool {
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "//") {
			return false
		}
		expr, err := constraint.Parse(line)
		if err != nil {
			continue
		}
		// A file may also need the test module's tag (fixture.go).
		ok := expr.Eval(func(tag string) bool { return tag == "js" || tag == "wasm" }) ||
			expr.Eval(func(tag string) bool { return tag == "js" || tag == "wasm" || tag == "plingfixture" })
		notNative := !expr.Eval(func(tag string) bool { return tag == "linux" || tag == "amd64" })
		return ok && notNative
	}
	return false
}
