package artifact_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/schema/internal/artifact"
)

// The test runs in schema/internal/artifact; these are the schema package
// directory and the checked-in artifacts, as go generate writes them.
var (
	schemaDir  = filepath.Join("..", "..")
	schemaFile = filepath.Join(schemaDir, "surface.schema.json")
	dtsFile    = filepath.Join(schemaDir, "..", "js-shim", "pling.d.ts")
	codecFile  = filepath.Join(schemaDir, "..", "internal", "wire", "encode_gen.go")
	pageFile   = filepath.Join(schemaDir, "pagespec", "decode_gen.go")
	reqFile    = filepath.Join(schemaDir, "..", "internal", "wire", "request_gen.go")
)

var generators = []struct {
	name string
	path string
	gen  func(string) ([]byte, error)
}{
	{"surface.schema.json", schemaFile, artifact.Schema},
	{"pling.d.ts", dtsFile, artifact.DTS},
	{"internal/wire/encode_gen.go", codecFile, func(string) ([]byte, error) { return artifact.Codec() }},
	{"pagespec/decode_gen.go", pageFile, func(string) ([]byte, error) { return artifact.PageDecoders() }},
	{"internal/wire/request_gen.go", reqFile, func(string) ([]byte, error) { return artifact.RequestDecoder() }},
}

// TestArtifactsUpToDate fails when a checked-in artifact differs from what
// the Go types generate now (docs/protocol.md §6: one source, no second schema).
func TestArtifactsUpToDate(t *testing.T) {
	for _, g := range generators {
		t.Run(g.name, func(t *testing.T) {
			got, err := g.gen(schemaDir)
			if err != nil {
				t.Fatalf("generating %s: %v", g.name, err)
			}
			want, err := os.ReadFile(g.path)
			if err != nil {
				t.Fatalf("%s is missing (%v); run `go generate ./...` in the module root and commit it", g.path, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run `go generate ./...` in the module root and commit the result.\ndiff (-checked-in +generated):\n%s",
					g.path, cmp.Diff(string(want), string(got)))
			}
		})
	}
}

// TestArtifactsDeterministic: the same types give the same bytes.
func TestArtifactsDeterministic(t *testing.T) {
	for _, g := range generators {
		t.Run(g.name, func(t *testing.T) {
			a, err := g.gen(schemaDir)
			if err != nil {
				t.Fatal(err)
			}
			b, err := g.gen(schemaDir)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("two runs differ:\n%s", cmp.Diff(string(a), string(b)))
			}
			if !bytes.HasSuffix(a, []byte("\n")) || bytes.HasSuffix(a, []byte("\n\n")) {
				t.Errorf("%s must end with exactly one newline", g.name)
			}
		})
	}
}

// declaredStructs lists the exported struct types declared in
// schema/types.go.
func declaredStructs(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(schemaDir, "types.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			ts := s.(*ast.TypeSpec)
			if _, ok := ts.Type.(*ast.StructType); ok && ts.Name.IsExported() {
				out = append(out, ts.Name.Name)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("types.go declares no exported struct types")
	}
	return out
}

// TestArtifactsCoverTypes: every exported struct type of types.go is reached
// from artifact.Roots and defined in both artifacts, so a new wire type
// cannot be forgotten.
func TestArtifactsCoverTypes(t *testing.T) {
	types, err := artifact.Types()
	if err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	var names []string
	for _, ty := range types {
		reached[ty.Name()] = true
		names = append(names, ty.Name())
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("Types is not sorted by name: %v", names)
	}
	_, defs, dts := generatedDefs(t)
	declared := declaredStructs(t)
	for _, name := range declared {
		t.Run(name, func(t *testing.T) {
			if !reached[name] {
				t.Errorf("%s is not reachable from artifact.Roots; add it there", name)
			}
			pub := artifact.PublishedName(name)
			if _, ok := defs[pub]; !ok {
				t.Errorf("surface.schema.json has no $defs/%s", pub)
			}
			if !bytes.Contains(dts, []byte("\nexport interface "+pub+" {\n")) {
				t.Errorf("pling.d.ts has no interface %s", pub)
			}
		})
	}
	if len(types) != len(declared) {
		t.Errorf("Types has %d types, types.go declares %d exported struct types", len(types), len(declared))
	}
	for _, n := range []string{artifact.RequestName, artifact.SurfaceCodeName, artifact.ActionCodeName} {
		if _, ok := defs[n]; !ok {
			t.Errorf("surface.schema.json has no $defs/%s", n)
		}
		if !bytes.Contains(dts, []byte("\nexport type "+n+" =")) {
			t.Errorf("pling.d.ts has no type %s", n)
		}
	}
}

// TestDTSHeader pins the declarations the JS shim relies on.
func TestDTSHeader(t *testing.T) {
	dts, err := artifact.DTS(schemaDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"// Code generated by schema/internal/gen. DO NOT EDIT.\n",
		"\nexport declare const SURFACE_PROTOCOL: \"pling.surface/0.1\";\n",
		"\nexport type SurfaceMethod = \"describe\" | \"invoke\";\n",
		"\nexport type SurfaceErrorCode =\n  | \"INVALID_REQUEST\"\n",
		"\nexport type ActionErrorCode =\n  | \"DUPLICATE_ACTION_ID\"\n",
		"\nexport type SurfaceRequest = SurfaceDescribeRequest | SurfaceInvokeRequest;\n",
		"  result?: SurfaceDescription | SurfaceInvokeResult;\n",
		"  id: string | null;\n",
		"  code: SurfaceErrorCode;\n",
		"  code: ActionErrorCode;\n",
	} {
		if !strings.Contains(string(dts), want) {
			t.Errorf("pling.d.ts lacks %q", want)
		}
	}
	if !strings.HasPrefix(string(dts), "// Code generated") {
		t.Error("pling.d.ts must start with the generated-code header")
	}
}

// TestPublishedNamesKeepTheWire: a Go type whose name differs from its
// published one (JSONSchema) is defined in surface.schema.json and
// pling.d.ts under the published name only, so that TypeScript code that
// imports JsonSchema and schemas that reference $defs/JsonSchema keep working.
func TestPublishedNamesKeepTheWire(t *testing.T) {
	js, defs, dts := generatedDefs(t)
	for goName, pub := range map[string]string{"JSONSchema": "JsonSchema"} {
		t.Run(goName, func(t *testing.T) {
			if got := artifact.PublishedName(goName); got != pub {
				t.Fatalf("PublishedName(%q) = %q, want %q", goName, got, pub)
			}
			if _, ok := defs[pub]; !ok {
				t.Errorf("surface.schema.json has no $defs/%s", pub)
			}
			if _, ok := defs[goName]; ok {
				t.Errorf("surface.schema.json defines $defs/%s, the Go name", goName)
			}
			if !bytes.Contains(dts, []byte("\n * "+pub+" is ")) || !bytes.Contains(dts, []byte("\nexport interface "+pub+" {\n")) {
				t.Errorf("pling.d.ts has no documented interface %s", pub)
			}
			if bytes.Contains(dts, []byte(goName)) || bytes.Contains(js, []byte(goName)) {
				t.Errorf("the artifacts mention the Go name %s", goName)
			}
		})
	}
}

// generatedDefs generates surface.schema.json and pling.d.ts from the
// types and returns the schema, its $defs and the declarations' text.
func generatedDefs(t *testing.T) (js []byte, defs map[string]json.RawMessage, dts []byte) {
	t.Helper()
	js, err := artifact.Schema(schemaDir)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	dts, err = artifact.DTS(schemaDir)
	if err != nil {
		t.Fatal(err)
	}
	return js, doc.Defs, dts
}
