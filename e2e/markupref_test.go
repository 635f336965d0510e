package e2e

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shimReads is every attribute js-shim/pling.js reads: the data-pling-*
// attributes of the page (attr(el, "name"), "data-pling-name" literals)
// and the data-* options of its script tag (data.name, and the loader
// options of LOADER, read from the tag's dataset), with those of the tag
// the module reads from the dataset pling.js hands it.
func shimReads(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../js-shim/pling.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	set := map[string]bool{}
	for _, m := range regexp.MustCompile(`attr\(\w+, "([a-z-]+)"\)|"data-pling-([a-z-]+)"|\[data-pling-([a-z-]+)\]`).FindAllStringSubmatch(src, -1) {
		set["data-pling-"+m[1]+m[2]+m[3]] = true
	}
	kebab := func(s string) string {
		return "data-" + regexp.MustCompile(`[A-Z]`).ReplaceAllStringFunc(s, func(c string) string { return "-" + strings.ToLower(c) })
	}
	for _, m := range regexp.MustCompile(`\bdata\.([a-zA-Z]+)`).FindAllStringSubmatch(src, -1) {
		set[kebab(m[1])] = true
	}
	loader := regexp.MustCompile(`var LOADER = \[([^\]]*)\]`).FindStringSubmatch(src)
	if loader == nil {
		t.Fatal("no LOADER in pling.js")
	}
	for _, m := range regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(loader[1], -1) {
		set[kebab(m[1])] = true
	}
	// The module reads the rest of the tag's dataset, which pling.js hands
	// it (wasm/pageconfig.go tagOptions: str("name")).
	mod, err := os.ReadFile("../wasm/pageconfig.go")
	if err != nil {
		t.Fatal(err)
	}
	tagOpts := regexp.MustCompile(`(?s)func tagOptions\(.*?\n}\n`).Find(mod)
	if tagOpts == nil {
		t.Fatal("no tagOptions in wasm/pageconfig.go")
	}
	for _, m := range regexp.MustCompile(`str\("(\w+)"\)`).FindAllStringSubmatch(string(tagOpts), -1) {
		set[kebab(m[1])] = true
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestMarkupReference: docs/markup.md has a section for exactly the
// attributes and script-tag options pling.js reads.
func TestMarkupReference(t *testing.T) {
	b, err := os.ReadFile("../docs/markup.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^### `(data-[a-z-]+)`$").FindAllStringSubmatch(string(b), -1) {
		documented = append(documented, m[1])
	}
	sort.Strings(documented)
	reads := shimReads(t)
	if len(reads) < 25 {
		t.Fatalf("found only %d attributes in pling.js: %v", len(reads), reads)
	}
	if diff := cmp.Diff(reads, documented); diff != "" {
		t.Errorf("docs/markup.md sections (+) against what pling.js reads (-):\n%s", diff)
	}
}

// TestPageAPIReference: docs/page-api.md documents every member of the
// page API's Pling interface (js-shim/pling-page.d.ts), and every member of
// its surface, as `pling.NAME`.
func TestPageAPIReference(t *testing.T) {
	dts, err := os.ReadFile("../js-shim/pling-page.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/page-api.md")
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?s)export interface Pling \{\n(.*?)\n\}`).FindSubmatch(dts)
	if body == nil {
		t.Fatal("no interface Pling in pling-page.d.ts")
	}
	var members []string
	nested := ""
	for _, line := range strings.Split(string(body[1]), "\n") {
		if m := regexp.MustCompile(`^  (\w+): \{$`).FindStringSubmatch(line); m != nil {
			nested = m[1] + "."
			continue
		}
		if strings.HasPrefix(line, "  };") {
			nested = ""
			continue
		}
		if m := regexp.MustCompile(`^\s+(?:readonly )?(\w+)[<(:?]`).FindStringSubmatch(line); m != nil {
			members = append(members, nested+m[1])
		}
	}
	if len(members) < 14 {
		t.Fatalf("read only %v from interface Pling", members)
	}
	t.Logf("interface Pling: %v", members)
	for _, m := range members {
		if !strings.Contains(string(doc), "`pling."+m) {
			t.Errorf("docs/page-api.md does not document pling.%s", m)
		}
	}
}
