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
