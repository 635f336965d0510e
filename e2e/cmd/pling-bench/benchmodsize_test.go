package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestModsizeHello: pling-bench modsize's reader, on a hello program it
// builds for GOOS=js: every byte of the file is in a section, every byte
// of the code section is a body or a body's size or the count, every
// body is named and in a package, the packages' and the parts' sums are
// the bodies' sum, and the packages such a program is made of are there.
func TestModsizeHello(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH to build a GOOS=js module with")
	}
	if out, err := exec.Command("go", "tool", "dist", "list").Output(); err != nil || !slices.Contains(strings.Fields(string(out)), "js/wasm") {
		t.Skipf("this Go toolchain does not build for js/wasm (go tool dist list: %v)", err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var progress bytes.Buffer
	rep, err := measureModsize(t.Context(), dir, ".", "", "", &progress)
	if err != nil {
		t.Fatal(err)
	}

	// Build and read the module again to check the report against the
	// bytes.
	b, m := buildNamed(t, dir, ".")
	if m.FileSize != rep.FileBytes {
		t.Errorf("the same build is %d B, the report says %d B", m.FileSize, rep.FileBytes)
	}
	sections := 8 // the magic and the version
	for _, s := range m.Sections {
		sections += s.Header + s.Size
	}
	if sections != len(b) {
		t.Errorf("the sections and their headers are %d B, the file %d B", sections, len(b))
	}

	code, _ := m.section(10, "")
	bodies, headers := 0, lebLen(len(m.Funcs))
	for _, f := range m.Funcs {
		bodies += f.Size
		headers += lebLen(f.Size)
		if f.Name == "" {
			t.Errorf("function %d has no name", f.Index)
		}
	}
	if bodies+headers != code.Size {
		t.Errorf("bodies %d B + sizes and count %d B = %d B, the code section %d B", bodies, headers, bodies+headers, code.Size)
	}
	if rep.BodyBytes != bodies || rep.CodeBytes != code.Size {
		t.Errorf("report: bodies %d B, code %d B; the module: %d B, %d B", rep.BodyBytes, rep.CodeBytes, bodies, code.Size)
	}
	if rep.Functions != len(m.Funcs) {
		t.Errorf("report: %d functions, the module %d", rep.Functions, len(m.Funcs))
	}
	if data, _ := m.section(11, ""); data.Size == 0 || rep.DataBytes != data.Size {
		t.Errorf("data section %d B, report %d B", data.Size, rep.DataBytes)
	}
	if rep.StrippedBytes <= 0 || rep.StrippedBytes >= rep.FileBytes {
		t.Errorf("stripped %d B, with names %d B: want 0 < stripped < with names", rep.StrippedBytes, rep.FileBytes)
	}

	byPkg, funcs := 0, 0
	var pkgs []string
	for _, p := range rep.Packages {
		byPkg += p.Bytes
		funcs += p.Functions
		pkgs = append(pkgs, p.Path)
		if strings.HasPrefix(p.Path, "?") {
			t.Errorf("function names of no known package: %s (%d B)", p.Path, p.Bytes)
		}
	}
	if byPkg != bodies || funcs != len(m.Funcs) {
		t.Errorf("packages sum to %d B in %d functions, the bodies are %d B in %d", byPkg, funcs, bodies, len(m.Funcs))
	}
	for _, want := range []string{"main", "fmt", "runtime", "syscall/js", "internal/runtime/maps", pkgTypeFuncs, pkgAssembly} {
		if !slices.Contains(pkgs, want) {
			t.Errorf("no package %s in %v", want, pkgs)
		}
	}
	byGroup := 0
	for _, g := range rep.Groups {
		byGroup += g.Bytes
	}
	if byGroup != bodies {
		t.Errorf("the parts sum to %d B, the bodies %d B", byGroup, bodies)
	}

	var out bytes.Buffer
	printModsize(&out, rep, 5)
	for _, want := range []string{"fmt", "function bodies: ", "code", "data", "name"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the printed report lacks %q:\n%s", want, out.String())
		}
	}
}

// buildNamed builds pkg in dir for GOOS=js with its name section, as
// pling-bench modsize does, and reads the module.
func buildNamed(t *testing.T, dir, pkg string) ([]byte, *wasmModule) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "names.wasm")
	if err := buildJS(t.Context(), dir, pkg, "", file, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseWasm(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, m
}

// lebLen is the length of n as an unsigned LEB128.
func lebLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// TestSymbolPackage: a function's name as the linker writes it in the
// name section (every character but a letter, digit, '_' or '.' made
// '_') is found in the package whose mangled path is its longest prefix.
func TestSymbolPackage(t *testing.T) {
	m := newSymbolMatcher([]string{"main", "runtime", "internal/runtime/maps", "slices", "github.com/pling-go/pling/runtime",
		"github.com/pling-go/pling/runtime/internal/canon", "gopkg.in/yaml.v3", "runtime/debug"})
	tests := []struct{ sym, want string }{
		{"runtime.mallocgc", "runtime"},
		{"main.main", "main"},
		{"internal_runtime_maps._Map_.getWithKeySmall", "internal/runtime/maps"},
		{"github.com_pling_go_pling_runtime._Gate_.Invoke", "github.com/pling-go/pling/runtime"},
		{"github.com_pling_go_pling_runtime_internal_canon.Append", "github.com/pling-go/pling/runtime/internal/canon"},
		{"slices.SortFunc_go.shape.string_", "slices"},
		{"github.com_pling_go_pling_runtime.set_go.shape.struct___github.com_x_y.z_.add", "github.com/pling-go/pling/runtime"},
		{"gopkg.in_yaml_2ev3.Unmarshal", "gopkg.in/yaml.v3"},
		{"runtime_debug.setGCPercent", "runtime/debug"},
		{"type_.eq.internal_abi.ITab", pkgTypeFuncs},
		{"memeqbody", pkgAssembly},
		{"wasm_export_run", pkgAssembly},
		{"nowhere_pkg.F", "?nowhere_pkg"},
	}
	for _, tt := range tests {
		t.Run(tt.sym, func(t *testing.T) {
			if got := m.pkg(tt.sym); got != tt.want {
				t.Errorf("pkg(%q) = %q, want %q", tt.sym, got, tt.want)
			}
		})
	}
}

// TestParseWasmRefuses: what is not a whole module is an error, not a
// short count.
func TestParseWasmRefuses(t *testing.T) {
	head := []byte("\x00asm\x01\x00\x00\x00")
	code := []byte{10, 4, 1, 2, 0, 0x0b} // one body of 2 bytes
	tests := []struct {
		name    string
		mod     []byte
		wantErr string
	}{
		{"not wasm", []byte("hello, world"), "not a WebAssembly binary"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), "version"},
		{"a section past the end", append(slices.Clone(head), 10, 9, 1), "past the end"},
		{"a body past its section", append(slices.Clone(head), 10, 3, 1, 5, 0), "code section"},
		{"bytes after the last body", append(slices.Clone(head), 10, 5, 1, 2, 0, 0x0b, 0), "after the last body"},
		{"a LEB128 too long", append(slices.Clone(head), 10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), "longer than 5 bytes"},
		{"no code section", slices.Clone(head), "no code section"},
		{"one body", append(slices.Clone(head), code...), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseWasm(tt.mod)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]wasmFunc{{Index: 0, Size: 2}}, m.Funcs); diff != "" || m.CodeHeaders != 2 {
					t.Errorf("funcs (-want +got):\n%s, headers %d", diff, m.CodeHeaders)
				}
				return
			}
			if !strings.Contains(got, tt.wantErr) {
				t.Errorf("parseWasm = %q, want an error with %q", got, tt.wantErr)
			}
		})
	}
}

// TestModuleSortInstances: pling's packages in the module sort with
// sort.Slice, whose one instance the module carries anyway, never with
// slices.SortFunc or SortStableFunc, each of which adds a copy of pdqsort
// (about 19 KB) per element shape; and the module has no such copy for
// pling's rows. It builds the module (-short skips it).
func TestModuleSortInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module for GOOS=js (a minute on a cold cache); -short skips it")
	}
	root := filepath.Join("..", "..", "..")
	out, err := goJS(t.Context(), root, "list", "-deps", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", "./wasm")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 3 || !strings.HasPrefix(f[0], plingModule) {
			continue
		}
		for _, name := range strings.Fields(f[2]) {
			src, err := os.ReadFile(filepath.Join(f[1], name))
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range []string{"slices.SortFunc(", "slices.SortStableFunc("} {
				if strings.Contains(string(src), call) {
					t.Errorf("%s/%s calls %s…): use sort.Slice (or sort.SliceStable), which the module has once for every caller", f[0], name, call)
				}
			}
		}
	}

	_, m := buildNamed(t, root, "./wasm")
	// RecordItem's shape as the name section writes it.
	const recordShape = "go.shape.struct___ID_string__Label_string__Offscreen_bool__"
	var found []string
	for _, f := range m.Funcs {
		if strings.HasPrefix(f.Name, "slices.") && strings.Contains(f.Name, recordShape) {
			found = append(found, fmt.Sprintf("%s (%d B)", f.Name, f.Size))
		}
	}
	if len(found) > 0 {
		t.Errorf("the module has a generic sort of its rows:\n%s", strings.Join(found, "\n"))
	}
}
