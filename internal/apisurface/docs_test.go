package apisurface

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestRuntimeAPIDocumented: every exported top-level name of package
// runtime (a constant, variable, function or type in its golden list) is
// named in docs/*.md, so the package exports only what the docs give a
// user (docs/style.md "A small public API"). Methods and struct fields
// are exempt: they are documented with their type, which must be named.
// A name no doc needs is unexported or moves under internal/.
func TestRuntimeAPIDocumented(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "runtime.api"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	var text strings.Builder
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		text.Write(b)
	}
	var missing []string
	for _, name := range topLevelNames(string(golden)) {
		// Named as code: `runtime.Name…` or `Name…` in a code span.
		if !regexp.MustCompile("(runtime\\.|`)" + name + `\b`).MatchString(text.String()) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("package runtime exports %d names no doc in docs/ names; document what a user needs, unexport or move under internal/ the rest: %s",
			len(missing), strings.Join(missing, ", "))
	}
}

// topLevelNames are the names a golden list declares at the top level
// (not methods): "func Name(…", "type Name …", "const Name", "var Name".
func topLevelNames(api string) []string {
	seen := map[string]bool{}
	for _, line := range strings.Split(api, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(line, "func (") {
			continue
		}
		switch f[0] {
		case "func", "type", "const", "var":
			name := f[1]
			if i := strings.IndexAny(name, "(["); i >= 0 {
				name = name[:i]
			}
			seen[name] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
