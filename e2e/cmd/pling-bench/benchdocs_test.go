package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestDocsFromArtifacts: pling-bench docs writes each block of a document
// from its fixture artifact (testdata/docs/NAME.json) and leaves the
// prose as it is; a block whose artifact is missing is left as it is
// too, and the command says so. The output is testdata/docs/want.md;
// PLING_WRITE_DOCS=1 rewrites it.
func TestDocsFromArtifacts(t *testing.T) {
	dir := t.TempDir()
	in, err := os.ReadFile(filepath.Join("testdata", "docs", "doc.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(dir, "benchmarks.md")
	if err := os.WriteFile(doc, in, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"docs", "--artifacts", filepath.Join("testdata", "docs"), "--doc", doc}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "docs", "want.md")
	if os.Getenv("PLING_WRITE_DOCS") == "1" {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (PLING_WRITE_DOCS=1 writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("the generated doc (-want +got):\n%s", diff)
	}
	for _, s := range []string{
		"Hand-written prose stays.", "Prose between the blocks stays too.", "The end.",
		"measured by `make bench-agent` (`pling-bench agent --runs N`) on 2026-12-05 01:40 UTC.",
		"measured by `make bench-browser` (`pling-bench browser`) on 2026-12-05 01:50 UTC.",
		"measured by `make bench-authority` (`pling-bench authority`) on 2026-12-05 01:45 UTC.",
		"on 2026-12-05 01:55 UTC.",
		"measured by `make bench-modsize` (`pling-bench modsize`) on 2026-12-05 02:00 UTC.",
		"| pling | 450 | 45.0 % | `runtime` 300, `wasm` (the main package) 150 |", "| heap before / peak / after | 1 / **42** / 10 MiB |",
	} {
		if !strings.Contains(string(got), s) {
			t.Errorf("the generated doc lacks %q", s)
		}
	}
	for _, s := range []string{"stale agent figures", "stale browser figures", "# pling-bench authority", "stale gateway figures", "stale module figures", "(navigate | settings_save)"} {
		if strings.Contains(string(got), s) {
			t.Errorf("the generated doc still has %q", s)
		}
	}

	// A second run over its own output changes nothing.
	stdout.Reset()
	if code := run(t.Context(), []string{"docs", "--artifacts", filepath.Join("testdata", "docs"), "--doc", doc}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "unchanged") {
		t.Errorf("second run: exit %d, %q; want unchanged", code, stdout.String())
	}

	// With no artifacts every block stays as it is, and each is named.
	if err := os.WriteFile(doc, in, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(t.Context(), []string{"docs", "--artifacts", t.TempDir(), "--doc", doc}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if kept, _ := os.ReadFile(doc); string(kept) != string(in) || !strings.Contains(stdout.String(), "unchanged") {
		t.Errorf("without artifacts the doc changed (stdout %q):\n%s", stdout.String(), kept)
	}
	for _, name := range docBlockNames() {
		if !strings.Contains(stderr.String(), name+".json is missing: block "+name+" left as it is") {
			t.Errorf("stderr = %q, want %s named as missing", stderr.String(), name)
		}
	}

	// Naming one block writes only it.
	if err := os.WriteFile(doc, in, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run(t.Context(), []string{"docs", "--artifacts", filepath.Join("testdata", "docs"), "--doc", doc, "bench-authority"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	one, _ := os.ReadFile(doc)
	if !strings.Contains(string(one), "stale agent figures") || strings.Contains(string(one), "\n<!-- generated: bench-authority -->\n<!-- end -->") {
		t.Errorf("docs bench-authority wrote other blocks, or not its own:\n%s", one)
	}
}

// TestDocSpans: a document whose markers are not well formed is refused
// whole, so that a generator never writes over prose.
func TestDocSpans(t *testing.T) {
	tests := []struct {
		name, doc, wantErr string
	}{
		{"well formed", "a\n<!-- generated: bench-agent -->\nx\n<!-- end -->\nb", ""},
		{"an unknown block", "<!-- generated: bench-nothing -->\n<!-- end -->", "opens no known block"},
		{"a block twice", "<!-- generated: bench-agent -->\n<!-- end -->\n<!-- generated: bench-agent -->\n<!-- end -->", "is there twice"},
		{"a block inside another", "<!-- generated: bench-agent -->\n<!-- generated: bench-browser -->\n<!-- end -->\n<!-- end -->", "opens inside block bench-agent"},
		{"an end with no block", "a\n<!-- end -->", "with no block open"},
		{"a block left open", "<!-- generated: bench-agent -->\nx", "is not closed"},
		{"a marker misspelt", "<!-- generated:bench-agent -->\n<!-- end -->", "is not a block marker"},
		{"a marker inside a line", "see <!-- end --> here", "is not a block marker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := docSpans(strings.Split(tt.doc, "\n"))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && !strings.Contains(got, tt.wantErr) {
				t.Errorf("docSpans = %q, want an error with %q", got, tt.wantErr)
			}
		})
	}
}

// TestBenchmarksDocGenerated: docs/benchmarks.md holds one well-formed
// block for each artifact, and each make bench-* target that writes an
// artifact runs pling-bench docs for its block after it.
func TestBenchmarksDocGenerated(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	spans, err := docSpans(strings.Split(string(doc), "\n"))
	if err != nil {
		t.Fatalf("docs/benchmarks.md: %v", err)
	}
	var got []string
	for _, s := range spans {
		got = append(got, s.name)
	}
	if diff := cmp.Diff(docBlockNames(), got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("docs/benchmarks.md's generated blocks (-want +got):\n%s", diff)
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range docBlockNames() {
		recipe := regexp.MustCompile(`(?m)^` + name + `:.*\n((?:\t.*\n)+)`).FindSubmatch(mk)
		if recipe == nil {
			t.Errorf("Makefile: no target %s", name)
			continue
		}
		if !strings.Contains(string(recipe[1]), "./e2e/cmd/pling-bench docs "+name+"\n") {
			t.Errorf("Makefile: %s does not run pling-bench docs %s:\n%s", name, name, recipe[1])
		}
	}
}

// TestWriteArtifact: a report is written as the JSON pling-bench docs
// reads (two-space indent, a final newline), its directory made, and the
// stem for the files beside it returned.
func TestWriteArtifact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "artifacts", "bench-x.json")
	stem, err := writeArtifact(path, struct {
		Date  string `json:"date"`
		Cells []int  `json:"cells"`
	}{"2026-12-05 06:00 UTC", []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(path, ".json"); stem != want {
		t.Errorf("stem %q, want %q", stem, want)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"date\": \"2026-12-05 06:00 UTC\",\n  \"cells\": [\n    1,\n    2\n  ]\n}\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("the artifact (-want +got):\n%s", diff)
	}
}
