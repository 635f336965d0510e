package runtime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/pling-go/pling/internal/testing/gosrc"
)

// The test hooks, the retired page readers and what nothing outside the
// package used (Runtime.HandleValue, Runtime.Clock) are not public API: an
// embedder does not see them (RATIONALE.md, "What stays exported for
// tests?"). The package's non-test files must not declare them.
func TestNoTestHooksInAPI(t *testing.T) {
	exported := map[string]bool{}
	fset := token.NewFileSet()
	for _, file := range gosrc.Package(t, ".") {
		f, err := parser.ParseFile(fset, file.Name, file.Src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.IsExported() {
				key := fd.Name.Name
				if fd.Recv != nil && len(fd.Recv.List) == 1 {
					recv := fd.Recv.List[0].Type
					if s, ok := recv.(*ast.StarExpr); ok {
						recv = s.X
					}
					if id, ok := recv.(*ast.Ident); ok {
						key = id.Name + "." + key
					}
				}
				exported[key] = true
			}
		}
	}
	for _, name := range []string{"MintToken", "Runtime.HandleTo", "Runtime.Runs", "WithFeedback", "WithPageFeedback", "Runtime.HandleValue", "Runtime.Clock"} {
		t.Run(name, func(t *testing.T) {
			if exported[name] {
				t.Errorf("%s is exported outside the tests", name)
			}
		})
	}
	if !exported["New"] || !exported["Runtime.Handle"] {
		t.Fatalf("the scan missed New or Runtime.Handle: %v", len(exported))
	}
}
