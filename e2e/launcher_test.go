package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneChromiumLauncher: Chromium is launched in one place,
// agent/cdp.NewAllocator (its flags, the $PLING_CHROMIUM lookup, the
// sandbox rule), so the product, the conformance host, the browser tests
// and the benchmarks run the same browser. No other Go file in the
// repository calls chromedp.NewExecAllocator.
func TestOneChromiumLauncher(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var callers []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewExecAllocator" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "chromedp" {
					rel, _ := filepath.Rel(root, path)
					callers = append(callers, filepath.ToSlash(rel))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range callers {
		if c != "agent/cdp/launch.go" {
			t.Errorf("%s launches Chromium itself; use agent/cdp.NewAllocator", c)
		}
	}
	if len(callers) == 0 {
		t.Error("found no launcher at all: agent/cdp/launch.go should call chromedp.NewExecAllocator")
	}
}
