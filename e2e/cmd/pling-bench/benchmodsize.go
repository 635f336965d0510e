package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/pling-go/pling/internal/cliflags"
)

func init() {
	registry.Add("modsize", "what the module is made of: function bodies by Go package from its name and code sections, and its sections' sizes (e2e/artifacts/bench-modsize.json)", runBenchModsize)
}

// plingModule is the module path of pling's own packages.
const plingModule = "github.com/pling-go/pling"

// modsizeReport is what pling-bench modsize measured: the sections of the
// module built without -s -w (which keeps the name section), its function
// bodies by package, and the size of the same module as make wasm builds
// it.
type modsizeReport struct {
	Date    string `json:"date"`
	Go      string `json:"go"`
	Commit  string `json:"commit,omitempty"`
	Package string `json:"package,omitempty"`
	Tags    string `json:"tags,omitempty"`
	// FileBytes is the module read, with its name section.
	FileBytes int `json:"fileBytes"`
	// StrippedBytes is the module built with make wasm's -s -w (0 when
	// modsize read a file it was given).
	StrippedBytes int               `json:"strippedBytes,omitempty"`
	Sections      []modsizeSection  `json:"sections"`
	CodeBytes     int               `json:"codeBytes"`
	DataBytes     int               `json:"dataBytes"`
	BodyBytes     int               `json:"bodyBytes"`
	Functions     int               `json:"functions"`
	Packages      []modsizePackage  `json:"packages"`
	Groups        []modsizeGroupSum `json:"groups"`
}

type modsizeSection struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// modsizePackage is one Go package's function bodies in the code section.
type modsizePackage struct {
	Path      string `json:"path"`
	Bytes     int    `json:"bytes"`
	Functions int    `json:"functions"`
}

// modsizeGroupSum is one part of the module: a group of packages.
type modsizeGroupSum struct {
	Name     string   `json:"name"`
	Bytes    int      `json:"bytes"`
	Packages []string `json:"packages"`
}

// Pseudo-packages for the functions that belong to no Go package.
const (
	pkgTypeFuncs = "type:"      // the compiler's type equality and hash functions
	pkgAssembly  = "(assembly)" // the runtime's wasm assembly and entry points
)

// modsizeGroups are the parts the docs give the module by, in order; a
// package is in the first whose test it passes, and what none takes is
// in "the rest".
var modsizeGroups = []modsizeGroup{
	{"pling", func(p string) bool { return p == "main" || p == plingModule || strings.HasPrefix(p, plingModule+"/") }},
	{"Go runtime and its support", func(p string) bool {
		return inPkgs(p, "runtime", "internal/runtime", "internal/abi", "internal/bytealg", "internal/chacha8rand", "internal/cpu",
			"internal/sync", "internal/synctest", "internal/stringslite", "sync", "errors", "iter", pkgTypeFuncs, pkgAssembly)
	}},
	{"encoding/json", func(p string) bool { return p == "encoding/json" }},
	{"crypto (the FIPS 140 module) and internal/godebug", func(p string) bool {
		return inPkgs(p, "crypto", "vendor/golang.org/x/crypto", "internal/godebug", "internal/bisect")
	}},
	{"reflect", func(p string) bool { return inPkgs(p, "reflect", "internal/reflectlite") }},
	{"generic instances of slices, sort, maps", func(p string) bool { return inPkgs(p, "slices", "sort", "maps") }},
	{"time", func(p string) bool { return p == "time" }},
	{"fmt", func(p string) bool { return inPkgs(p, "fmt", "internal/fmtsort") }},
	{"strconv", func(p string) bool { return inPkgs(p, "strconv", "internal/strconv") }},
	{"syscall/js and hack-pad/safejs", func(p string) bool { return inPkgs(p, "syscall", "github.com/hack-pad/safejs") }},
}

const modsizeRest = "the rest"

// modsizeGroup is one part: its name and which packages are in it.
type modsizeGroup struct {
	name  string
	match func(pkg string) bool
}

// inPkgs reports whether p is one of roots or a package under one.
func inPkgs(p string, roots ...string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// groupPackages sums the packages (largest first) into the parts.
func groupPackages(pkgs []modsizePackage) []modsizeGroupSum {
	out := make([]modsizeGroupSum, len(modsizeGroups)+1)
	for i, g := range modsizeGroups {
		out[i].Name = g.name
	}
	out[len(modsizeGroups)].Name = modsizeRest
	for _, p := range pkgs {
		i := slices.IndexFunc(modsizeGroups, func(g modsizeGroup) bool { return g.match(p.Path) })
		if i < 0 {
			i = len(modsizeGroups)
		}
		out[i].Bytes += p.Bytes
		out[i].Packages = append(out[i].Packages, p.Path)
	}
	return slices.DeleteFunc(out, func(g modsizeGroupSum) bool { return g.Bytes == 0 })
}

func runBenchModsize(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := cliflags.New("modsize", stderr,
		"Usage: pling-bench modsize [flags]",
		"Builds the module as make wasm does but without -s -w (GOOS=js GOARCH=wasm go build -trimpath), or reads --wasm, and prints what it is made of: the size of each section, and the function bodies of the code section summed by Go package (from the module's own name section) and by part. Writes the figures as JSON for pling-bench docs.",
	)
	pkg := fl.String("pkg", "./wasm", "the package to build (make wasm's)")
	tags := fl.String("tags", "", "build tags (make wasm builds dist/pling.wasm with none, dist/pling-conform.wasm with plingfixture)")
	wasmFile := fl.String("wasm", "", "read this module instead of building one (it must have its name section: built without -s); --pkg and --tags still name the packages it was built from")
	top := fl.Int("top", 40, "packages to print, largest first")
	out := fl.String("out", filepath.Join("e2e", "artifacts", "bench-modsize.json"), "write the figures as JSON here (\"\" for none)")
	if _, exit, ok := cliflags.Parse(fl, args); !ok {
		return exit
	}
	fail := failer(stderr, "modsize")
	rep, err := measureModsize(ctx, ".", *pkg, *tags, *wasmFile, stderr)
	if err != nil {
		return fail("%v", err)
	}
	printModsize(stdout, rep, *top)
	if *out == "" {
		return 0
	}
	if _, err := writeArtifact(*out, rep); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(stdout, "\nwritten: %s (pling-bench docs bench-modsize puts it in docs/benchmarks.md)\n", *out)
	return 0
}

// goJS runs the go command in dir for GOOS=js (as make wasm does) and
// returns its output; what it printed on stderr is in its error.
func goJS(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return b, nil
}

// buildJS builds pkg in dir with tags into file as make wasm does
// (-trimpath, no build id); with its name section unless strip (-s -w,
// make wasm's own).
func buildJS(ctx context.Context, dir, pkg, tags, file string, strip bool) error {
	ldflags := "-ldflags=-buildid="
	if strip {
		ldflags = "-ldflags=-s -w -buildid="
	}
	args := []string{"build", "-trimpath", "-buildvcs=false"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	_, err := goJS(ctx, dir, append(args, ldflags, "-o", file, pkg)...)
	return err
}

// measureModsize builds pkg in dir (or reads wasmFile) and sums it up.
func measureModsize(ctx context.Context, dir, pkg, tags, wasmFile string, progress io.Writer) (*modsizeReport, error) {
	rep := &modsizeReport{Date: reportDate(), Package: pkg, Tags: tags}
	goCmd := func(args ...string) ([]byte, error) { return goJS(ctx, dir, args...) }
	if v, err := goCmd("env", "GOVERSION"); err == nil {
		rep.Go = strings.TrimSpace(string(v))
	}
	if c, err := exec.CommandContext(ctx, "git", "-C", dir, "describe", "--always", "--dirty", "--abbrev=7").Output(); err == nil {
		rep.Commit = strings.TrimSpace(string(c))
	}
	tagArgs := []string{}
	if tags != "" {
		tagArgs = []string{"-tags", tags}
	}
	// The linker writes a symbol's name into the name section with every
	// character but a letter, digit, '_' or '.' turned into '_', so the
	// import path is lost; the packages the module is built from say
	// which prefix is whose.
	list, err := goCmd(slices.Concat([]string{"list", "-deps", "-f", "{{if eq .Name \"main\"}}main{{else}}{{.ImportPath}}{{end}}"}, tagArgs, []string{pkg})...)
	if err != nil {
		return nil, err
	}
	// The runtime defines functions in packages the module need not
	// import (runtime/debug's, by go:linkname), so the standard library's
	// packages are candidates too.
	std, err := goCmd("list", "std")
	if err != nil {
		return nil, err
	}
	pkgs := slices.Concat(strings.Fields(string(list)), strings.Fields(string(std)))
	file := wasmFile
	if file == "" {
		tmp, err := os.MkdirTemp("", "pling-modsize-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		file = filepath.Join(tmp, "names.wasm")
		stripped := filepath.Join(tmp, "stripped.wasm")
		fmt.Fprintf(progress, "· building %s for GOOS=js without -s -w, and with them as make wasm does (a minute or more on a cold cache)\n", pkg)
		if err := buildJS(ctx, dir, pkg, tags, file, false); err != nil {
			return nil, err
		}
		if err := buildJS(ctx, dir, pkg, tags, stripped, true); err != nil {
			return nil, err
		}
		st, err := os.Stat(stripped)
		if err != nil {
			return nil, err
		}
		rep.StrippedBytes = int(st.Size())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	m, err := parseWasm(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if _, ok := m.section(0, "name"); !ok {
		return nil, fmt.Errorf("%s has no name section (built with -s?)", file)
	}
	rep.FileBytes = m.FileSize
	for _, s := range m.Sections {
		rep.Sections = append(rep.Sections, modsizeSection{Name: s.Name, Bytes: s.Size})
	}
	code, _ := m.section(10, "")
	rep.CodeBytes = code.Size
	if data, ok := m.section(11, ""); ok {
		rep.DataBytes = data.Size
	}
	rep.Functions = len(m.Funcs)
	byPkg := map[string]*modsizePackage{}
	match := newSymbolMatcher(pkgs)
	for _, f := range m.Funcs {
		p := match.pkg(f.Name)
		if byPkg[p] == nil {
			byPkg[p] = &modsizePackage{Path: p}
		}
		byPkg[p].Bytes += f.Size
		byPkg[p].Functions++
		rep.BodyBytes += f.Size
	}
	for _, p := range byPkg {
		rep.Packages = append(rep.Packages, *p)
	}
	slices.SortFunc(rep.Packages, func(a, b modsizePackage) int {
		if a.Bytes != b.Bytes {
			return b.Bytes - a.Bytes
		}
		return strings.Compare(a.Path, b.Path)
	})
	rep.Groups = groupPackages(rep.Packages)
	return rep, nil
}

// symbolMatcher finds a wasm function name's package among the packages
// the module was built from, by the longest mangled import path that the
// name starts with, followed by a dot.
type symbolMatcher struct {
	mangled map[string]string // mangled path → import path
	lengths []int             // the mangled paths' lengths, longest first
}

// wasmNameMangle is what the Go linker replaces with '_' in the name
// section (cmd/link/internal/wasm: [^\w.]).
var wasmNameMangle = regexp.MustCompile(`[^\w.]`)

func newSymbolMatcher(pkgs []string) *symbolMatcher {
	m := &symbolMatcher{mangled: map[string]string{}}
	for _, p := range pkgs {
		// A symbol's package prefix escapes the dots of the path's last
		// element as %2e (cmd/internal/objabi.PathToPrefix).
		prefix := p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			prefix = p[:i+1] + strings.ReplaceAll(p[i+1:], ".", "%2e")
		}
		k := wasmNameMangle.ReplaceAllString(prefix, "_")
		m.mangled[k] = p
		if !slices.Contains(m.lengths, len(k)) {
			m.lengths = append(m.lengths, len(k))
		}
	}
	slices.SortFunc(m.lengths, func(a, b int) int { return b - a })
	return m
}

// pkg is the package of a function named sym in the name section: the
// compiler's type functions are "type:", a name with no package prefix
// (the runtime's assembly: memeqbody, wasm_export_run, …) is
// "(assembly)", and a prefix of no known package is "?" and the prefix.
func (m *symbolMatcher) pkg(sym string) string {
	if strings.HasPrefix(sym, "type_.") {
		return pkgTypeFuncs
	}
	for _, n := range m.lengths {
		if len(sym) > n && sym[n] == '.' {
			if p, ok := m.mangled[sym[:n]]; ok {
				return p
			}
		}
	}
	if i := strings.IndexByte(sym, '.'); i > 0 {
		return "?" + sym[:i]
	}
	return pkgAssembly
}

// printModsize writes the report as text.
func printModsize(w io.Writer, rep *modsizeReport, top int) {
	fmt.Fprintf(w, "module %s (%s, %s", rep.Package, rep.Go, rep.Commit)
	if rep.Tags != "" {
		fmt.Fprintf(w, ", tags %s", rep.Tags)
	}
	fmt.Fprintf(w, "): %d B with its name section", rep.FileBytes)
	if rep.StrippedBytes > 0 {
		fmt.Fprintf(w, ", %d B as make wasm builds it (-s -w)", rep.StrippedBytes)
	}
	fmt.Fprintf(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "section\tbytes\t")
	for _, s := range rep.Sections {
		fmt.Fprintf(tw, "%s\t%d\t\n", s.Name, s.Bytes)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nfunction bodies: %d B in %d functions (the code section's other %d B are their sizes and count)\n\n", rep.BodyBytes, rep.Functions, rep.CodeBytes-rep.BodyBytes)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "part\tbodies, B\tshare\tpackages")
	for _, g := range rep.Groups {
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%s\n", g.Name, g.Bytes, 100*float64(g.Bytes)/float64(rep.BodyBytes), strings.Join(g.Packages, " "))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "package\tbodies, B\tfunctions")
	for i, p := range rep.Packages {
		if i == top {
			fmt.Fprintf(tw, "(%d more)\t\t\n", len(rep.Packages)-top)
			break
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\n", p.Path, p.Bytes, p.Functions)
	}
	tw.Flush()
}

// renderModsizeBlock is the docs' table of the module's parts.
func renderModsizeBlock(art []byte, w io.Writer) (string, error) {
	var rep modsizeReport
	if err := json.Unmarshal(art, &rep); err != nil {
		return "", err
	}
	if rep.BodyBytes == 0 {
		return "", fmt.Errorf("no function bodies")
	}
	size := map[string]int{}
	for _, p := range rep.Packages {
		size[p.Path] = p.Bytes
	}
	fmt.Fprintf(w, "`%s` at `%s` (%s) built without `-s -w`: %s B, %s B with them; code section %s B (function bodies %s B in %s functions), data section %s B.\n\n",
		rep.Package, rep.Commit, rep.Go, commas(rep.FileBytes), commas(rep.StrippedBytes), commas(rep.CodeBytes), commas(rep.BodyBytes), commas(rep.Functions), commas(rep.DataBytes))
	fmt.Fprintln(w, "| part | function bodies, B | share | its packages, largest first (B) |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, g := range rep.Groups {
		var ps []string
		for i, p := range g.Packages {
			if i == 8 {
				ps = append(ps, fmt.Sprintf("%d more", len(g.Packages)-i))
				break
			}
			name := p
			if g.Name == "pling" {
				name = strings.TrimPrefix(strings.TrimPrefix(p, plingModule), "/")
				if p == "main" {
					ps = append(ps, fmt.Sprintf("`%s` (the main package) %s", strings.TrimPrefix(rep.Package, "./"), commas(size[p])))
					continue
				}
			}
			ps = append(ps, fmt.Sprintf("`%s` %s", name, commas(size[p])))
		}
		fmt.Fprintf(w, "| %s | %s | %.1f %% | %s |\n", mdCell(g.Name), commas(g.Bytes), 100*float64(g.Bytes)/float64(rep.BodyBytes), mdCell(strings.Join(ps, ", ")))
	}
	return rep.Date, nil
}

// commas is n with thousands separated by commas, as the docs write sizes.
func commas(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
