package apisurface

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/gosrc"
)

// publicPackages are the packages users import (docs/architecture.md
// "What is public"), from the repository's root.
var publicPackages = []string{
	"errors", "schema", "schema/pagespec", "runtime",
	"agent", "agent/cdp", "agent/mcp",
	"authority", "authority/follow",
	"gateway", "plinghttp", "wasm/gojs",
}

// TestExportedAPI: each public package's exported API is its golden list
// in testdata/. A change writes a diff here; PLING_WRITE_API=1 rewrites
// the lists, so the diff is reviewed with the change that made it.
func TestExportedAPI(t *testing.T) {
	for _, pkg := range publicPackages {
		t.Run(pkg, func(t *testing.T) {
			got := exportedAPI(t, filepath.Join("..", "..", pkg))
			golden := filepath.Join("testdata", strings.ReplaceAll(pkg, "/", "_")+".api")
			if os.Getenv("PLING_WRITE_API") == "1" {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (PLING_WRITE_API=1 writes it)", err)
			}
			if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
				t.Errorf("the exported API of %s changed (-golden +now); if meant, PLING_WRITE_API=1 go test ./internal/apisurface:\n%s", pkg, diff)
			}
		})
	}
}

// exportedAPI lists a package's exported declarations, one a line,
// sorted: constants, variables, functions, types (a struct with its
// exported fields, an interface with its methods) and the exported
// methods of exported types. Build-tagged files for js/wasm only are read
// too (the API is the union).
func exportedAPI(t *testing.T, dir string) string {
	t.Helper()
	fset := token.NewFileSet()
	// Every file but tests, whatever its build tags: the API is the union.
	var files []*ast.File
	for _, file := range gosrc.Package(t, dir) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, file.Name), file.Src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	var lines []string
	show := func(n any) string {
		var b bytes.Buffer
		if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	{
		for _, f := range files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					recv := ""
					if d.Recv != nil && len(d.Recv.List) > 0 {
						rt := d.Recv.List[0].Type
						if st, ok := rt.(*ast.StarExpr); ok {
							rt = st.X
						}
						if ix, ok := rt.(*ast.IndexExpr); ok {
							rt = ix.X
						}
						if ix, ok := rt.(*ast.IndexListExpr); ok {
							rt = ix.X
						}
						if id, ok := rt.(*ast.Ident); !ok || !id.IsExported() {
							continue
						}
						recv = "(" + show(d.Recv.List[0].Type) + ") "
					}
					lines = append(lines, "func "+recv+d.Name.Name+strings.TrimPrefix(show(d.Type), "func"))
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									typ := ""
									if s.Type != nil {
										typ = " " + show(s.Type)
									}
									lines = append(lines, d.Tok.String()+" "+n.Name+typ)
								}
							}
						case *ast.TypeSpec:
							if !s.Name.IsExported() {
								continue
							}
							lines = append(lines, "type "+s.Name.Name+typeParams(show, s)+typeText(show, s))
						}
					}
				}
			}
		}
	}
	sort.Strings(lines)
	lines = dedupe(lines)
	return strings.Join(lines, "\n") + "\n"
}

func typeParams(show func(any) string, s *ast.TypeSpec) string {
	if s.TypeParams == nil {
		return ""
	}
	return show(s.TypeParams)
}

// typeText is a type's definition with its unexported fields and methods
// left out.
func typeText(show func(any) string, s *ast.TypeSpec) string {
	eq := " "
	if s.Assign.IsValid() {
		eq = " = "
	}
	switch tt := s.Type.(type) {
	case *ast.StructType:
		var fields []string
		for _, f := range tt.Fields.List {
			if len(f.Names) == 0 { // embedded
				if ast.IsExported(strings.TrimPrefix(show(f.Type), "*")) || strings.Contains(show(f.Type), ".") {
					fields = append(fields, show(f.Type))
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					fields = append(fields, n.Name+" "+show(f.Type))
				}
			}
		}
		return eq + "struct{ " + strings.Join(fields, "; ") + " }"
	case *ast.InterfaceType:
		var ms []string
		for _, m := range tt.Methods.List {
			if len(m.Names) == 0 {
				ms = append(ms, show(m.Type))
				continue
			}
			for _, n := range m.Names {
				if n.IsExported() {
					ms = append(ms, n.Name+strings.TrimPrefix(show(m.Type), "func"))
				}
			}
		}
		return eq + "interface{ " + strings.Join(ms, "; ") + " }"
	}
	return eq + show(s.Type)
}

func dedupe(in []string) []string {
	out := in[:0]
	for i, l := range in {
		if i == 0 || l != in[i-1] {
			out = append(out, l)
		}
	}
	return out
}
