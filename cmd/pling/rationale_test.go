package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

const (
	tocStart = "<!-- contents: written by TestRationaleContents (PLING_WRITE_TOC=1) -->"
	tocEnd   = "<!-- /contents -->"
)

// anchor is the fragment GitHub gives a heading: lower case, letters,
// digits, spaces, hyphens and underscores kept, spaces as hyphens, a
// repeat numbered -1, -2, ….
func anchor(heading string, seen map[string]int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	a := b.String()
	if n := seen[a]; n > 0 {
		seen[a] = n + 1
		return fmt.Sprintf("%s-%d", a, n)
	}
	seen[a] = 1
	return a
}

var headingLine = regexp.MustCompile(`^(##|###) (.+)$`)

// rationaleContents lists every ## and ### heading of RATIONALE.md as a
// link, ### ones indented under their ##.
func rationaleContents(doc string) string {
	var b strings.Builder
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		m := headingLine.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		indent := ""
		if m[1] == "###" {
			indent = "  "
		}
		fmt.Fprintf(&b, "%s* [%s](#%s)\n", indent, strings.ReplaceAll(m[2], "`", ""), anchor(m[2], seen))
	}
	return b.String()
}

// TestRationaleContents: RATIONALE.md opens with a table of contents of
// its entries, current with the headings below it. PLING_WRITE_TOC=1
// rewrites it.
func TestRationaleContents(t *testing.T) {
	const path = "../../RATIONALE.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, tocStart), strings.Index(doc, tocEnd)
	if i < 0 || j < i {
		t.Fatalf("RATIONALE.md has no %q … %q block", tocStart, tocEnd)
	}
	body := doc[j+len(tocEnd):]
	want := tocStart + "\n" + rationaleContents(body) + tocEnd
	if got := doc[i : j+len(tocEnd)]; got != want {
		if os.Getenv("PLING_WRITE_TOC") == "1" {
			if err := os.WriteFile(path, []byte(doc[:i]+want+body), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("RATIONALE.md's contents are stale: run PLING_WRITE_TOC=1 go test ./cmd/pling -run TestRationaleContents")
	}
}

func TestAnchor(t *testing.T) {
	seen := map[string]int{}
	for _, c := range []struct{ in, want string }{
		{"Why is the package called `errors`?", "why-is-the-package-called-errors"},
		{"Why 600 *bytes* for details?", "why-600-bytes-for-details"},
		{"Why 600 *bytes* for details?", "why-600-bytes-for-details-1"},
		{"Which id does a response echo?", "which-id-does-a-response-echo"},
	} {
		if got := anchor(c.in, seen); got != c.want {
			t.Errorf("anchor(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// rationaleSections are RATIONALE.md's sections, in order; every entry
// is a "### Why …?" (or What, How, Which) question under one of them.
var rationaleSections = []string{"Errors", "Wire", "Runtime", "Agent side", "The page and `pling serve`", "The authority", "The gateway", "Reference"}

// TestRationaleEntriesUnderSections: every ## heading of RATIONALE.md is
// one of its sections, and every question is a ### entry, so that an
// entry cannot sit at a section's level and take the entries after it as
// its own.
func TestRationaleEntriesUnderSections(t *testing.T) {
	b, err := os.ReadFile("../../RATIONALE.md")
	if err != nil {
		t.Fatal(err)
	}
	var sections []string
	for i, line := range strings.Split(string(b), "\n") {
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		question := regexp.MustCompile(`^(Why|What|How|Which|Who|When|Where|Is|Are|Does|Do)\b`).MatchString(m[2])
		switch {
		case m[1] == "##" && question:
			t.Errorf("RATIONALE.md:%d: %q is a section heading (##); an entry is ### under its section", i+1, m[2])
		case m[1] == "##":
			sections = append(sections, m[2])
		case m[1] == "###" && !question:
			t.Errorf("RATIONALE.md:%d: entry %q is not a question", i+1, m[2])
		}
	}
	if strings.Join(sections, "|") != strings.Join(rationaleSections, "|") {
		t.Errorf("sections %q, want %q", sections, rationaleSections)
	}
}
