package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pling-go/pling/internal/testing/gosrc"
)

// TestDocsListEveryMetric: every metric family the authority and the
// gateway register (a Name: "pling_…" in their source) is named in
// their reference page, so an operator reading it knows what to scrape.
func TestDocsListEveryMetric(t *testing.T) {
	name := regexp.MustCompile(`Name:\s*"(pling_[a-z_]+)"`)
	for _, tc := range []struct{ pkg, doc string }{
		{"authority", "docs/authority.md"},
		{"gateway", "docs/gateway.md"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("../..", tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, f := range gosrc.Package(t, filepath.Join("../..", tc.pkg)) {
				for _, m := range name.FindAllStringSubmatch(string(f.Src), -1) {
					found++
					if !strings.Contains(string(doc), "`"+m[1]) {
						t.Errorf("%s registers %s; %s does not name it", f.Name, m[1], tc.doc)
					}
				}
			}
			if found == 0 {
				t.Fatalf("no metric found in %s", tc.pkg)
			}
		})
	}
}
