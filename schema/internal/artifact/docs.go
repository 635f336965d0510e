package artifact

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// docs are the doc comments of package schema, by name.
type docs struct {
	types  map[string]string            // type name → doc
	fields map[string]map[string]string // type name → Go field name → doc
	values map[string]string            // const or var name → doc
}

// readDocs parses the non-test Go files of package schema in dir. A field's
// doc is its doc comment, or else its line comment; a type's is its own
// doc comment, or the declaration's when the declaration holds one type.
func readDocs(dir string) (*docs, error) {
	d := &docs{types: map[string]string{}, fields: map[string]map[string]string{}, values: map[string]string{}}
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("artifact: reading the schema package: %w", err)
	}
	fset := token.NewFileSet()
	files := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("artifact: %w", err)
		}
		if strings.HasSuffix(f.Name.Name, "_test") {
			continue
		}
		files++
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					d.types[s.Name.Name] = docText(s.Doc, gd, s.Comment)
					st, ok := s.Type.(*ast.StructType)
					if !ok {
						continue
					}
					fd := map[string]string{}
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							fd[n.Name] = docText(fl.Doc, nil, fl.Comment)
						}
					}
					d.fields[s.Name.Name] = fd
				case *ast.ValueSpec:
					for _, n := range s.Names {
						d.values[n.Name] = docText(s.Doc, gd, s.Comment)
					}
				}
			}
		}
	}
	if files == 0 {
		return nil, fmt.Errorf("artifact: no Go files of package schema in %s", dir)
	}
	return d, nil
}

// docText is a doc comment's text without comment markers or the final
// newline. The declaration's doc stands in when it declares only this spec.
func docText(doc *ast.CommentGroup, gd *ast.GenDecl, line *ast.CommentGroup) string {
	if doc == nil && gd != nil && len(gd.Specs) == 1 {
		doc = gd.Doc
	}
	if doc == nil {
		doc = line
	}
	return strings.TrimSpace(doc.Text()) // Text of nil is ""
}

// oneLine joins a doc's lines into paragraphs for JSON, where a description
// is prose and line breaks of the Go source mean nothing.
func oneLine(doc string) string {
	paras := strings.Split(doc, "\n\n")
	for i, p := range paras {
		paras[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paras, "\n\n")
}
