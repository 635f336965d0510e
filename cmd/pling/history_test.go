package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// History in comments and docs: a comment says why the code is as it is
// now, a doc what the project does; what it used to be, and which issue
// asked for it, belong in commit messages, where they stay true.
var (
	// "issue 21", "Issue 23 item 13", "issue #7", "(finding 4)".
	issueRef = regexp.MustCompile(`(?i)\b(?:issue #?|finding )\d+`)
	// A commit named as a point in time: "On d4f77f3 it fails",
	// "(16c19da and this branch's ...)". Hex alone is not flagged: SRI
	// hashes, test vectors and content-hashed names are hex too, but they
	// are not introduced this way.
	commitRef = regexp.MustCompile(`(?i)\b(?:on|before|since|after|until|at|of) ([0-9a-f]{7,40})\b|\b([0-9a-f]{7,40}) (?:it fails|fails|failed|passes|passed|and this branch)\b`)
	// "main 5494314", "commit 16c19da", "measured on 5494314": a hash
	// even when all digits.
	mainRef = regexp.MustCompile(`(?i)\b(?:main|commit|measured on) [0-9a-f]{7,40}\b`)
	// "On the old code the ...", "On main the value ...", "(on main: 330 MB)".
	oldCode = regexp.MustCompile(`(?i)\bon the old code\b|\bon main(?::| the\b| it\b)`)
)

// historyIn returns what in s names history, or "".
func historyIn(s string) string {
	m, _ := historyAt(s)
	return m
}

// historyAt returns the first thing in s that names history and where it
// starts, or "".
func historyAt(s string) (string, int) {
	first, at := "", len(s)
	for _, re := range []*regexp.Regexp{issueRef, mainRef, oldCode} {
		if loc := re.FindStringIndex(s); loc != nil && loc[0] < at {
			first, at = s[loc[0]:loc[1]], loc[0]
		}
	}
	for _, loc := range commitRef.FindAllStringSubmatchIndex(s, -1) {
		hex := ""
		for g := 2; g < len(loc); g += 2 {
			if loc[g] >= 0 {
				hex = s[loc[g]:loc[g+1]]
			}
		}
		// A commit hash has a letter and a digit; "at 1000000" is a number.
		if strings.ContainsAny(hex, "0123456789") && strings.ContainsAny(strings.ToLower(hex), "abcdef") && loc[0] < at {
			first, at = s[loc[0]:loc[1]], loc[0]
			break
		}
	}
	return first, at
}

func TestHistoryIn(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"(issue 21 finding 3)", true},
		{"Issue 23 item 13: a pattern", true},
		{"see issue #7", true},
		{"On d4f77f3 it fails: the token", true},
		{"of this session (16c19da and this branch's bench changes)", true},
		{"On the old code approve took no subject", true},
		{"passed them raw. On main the value passed", true},
		{"must not have read it (on main: 330 MB)", true},
		{"CI runs on main branch pushes", false},
		{"the mirror as on main 5494314: its pling.wasm", true},
		{"the review's finding 11: 100,000 ids", true},
		{"must stop it: measured on 5494314, the dialog", true},
		{"FuzzTokenVerify/c7857da06e7dd439) and every spelling", false},
		{`integrity="sha384-0a1b2c3d4e5f"`, false},
		{"pling.1a2b3c4d5e6f.wasm", false},
		{"waits at 1000000 ms", false},
		{"the issue is that 3 tabs", false},
		{"issues a token", false},
	} {
		if got := historyIn(tc.text) != ""; got != tc.want {
			t.Errorf("historyIn(%q) found history: %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestNoHistoryInComments reads every tracked .go, .js and .mjs file's
// comments, and every line of README.md, RATIONALE.md and docs/*.md, for
// issue numbers, commits named as points in time and "on the old code".
func TestNoHistoryInComments(t *testing.T) {
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--", "*.go", "*.js", "*.mjs", "*.md").Output()
	if err != nil {
		t.Skipf("no git checkout to read (%v)", err)
	}
	var found []string
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || name == "cmd/pling/history_test.go" { // its comments quote what it looks for
			continue
		}
		doc := strings.HasSuffix(name, ".md")
		if doc && !(name == "README.md" || name == "RATIONALE.md" || (strings.HasPrefix(name, "docs/") && !strings.Contains(name[len("docs/"):], "/"))) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			t.Fatal(err)
		}
		var texts []lineText
		switch {
		case doc:
			texts = lines(src, 1)
		case strings.HasSuffix(name, ".go"):
			texts = goComments(src)
		default:
			texts = jsComments(src)
		}
		for i, lt := range texts {
			// A line with the next, so that "issue\n// 21" is found too;
			// a match is reported on the line it starts on.
			text := lt.text
			if i+1 < len(texts) && texts[i+1].line == lt.line+1 {
				text += " " + strings.TrimSpace(texts[i+1].text)
			}
			if m, at := historyAt(text); m != "" && at < len(lt.text) {
				found = append(found, fmt.Sprintf("%s:%d: %q", name, lt.line, m))
			}
		}
	}
	if len(found) > 0 {
		t.Errorf("%d comments or doc lines carry history (say why it is so now; history goes in commit messages):\n%s",
			len(found), strings.Join(found, "\n"))
	}
}

// A lineText is one line of a comment or a doc, numbered from 1.
type lineText struct {
	line int
	text string
}

func lines(b []byte, first int) []lineText {
	var out []lineText
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := first; sc.Scan(); n++ {
		out = append(out, lineText{n, sc.Text()})
	}
	return out
}

// goComments returns the lines of a Go file's comments.
func goComments(src []byte) []lineText {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	var out []lineText
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.COMMENT {
			for _, lt := range lines([]byte(lit), file.Line(pos)) {
				lt.text = strings.TrimPrefix(strings.TrimSpace(lt.text), "//")
				out = append(out, lt)
			}
		}
	}
}

// jsComments returns the lines of a script's comments: what follows //,
// and what is between /* and */. It does not parse strings or regular
// expressions, so a "//" in a string counts as a comment; the check errs
// on the side of reading too much.
func jsComments(src []byte) []lineText {
	var out []lineText
	inBlock := false
	for _, lt := range lines(src, 1) {
		s := lt.text
		var comment strings.Builder
		for s != "" {
			if inBlock {
				end := strings.Index(s, "*/")
				if end < 0 {
					comment.WriteString(s)
					s = ""
					break
				}
				comment.WriteString(s[:end] + " ")
				s, inBlock = s[end+2:], false
				continue
			}
			line, block := strings.Index(s, "//"), strings.Index(s, "/*")
			if line >= 0 && (block < 0 || line < block) {
				comment.WriteString(s[line+2:])
				s = ""
			} else if block >= 0 {
				s, inBlock = s[block+2:], true
			} else {
				s = ""
			}
		}
		if comment.Len() > 0 {
			out = append(out, lineText{lt.line, comment.String()})
		}
	}
	return out
}
