package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDocsNameWhatExists reads every `pling …` and `make …` the README,
// RATIONALE and docs/ write as code (inline or in a fenced block) and
// checks it against the source: the command is registered, each flag it
// shows is in that command's own -h (a subcommand's, where one is named),
// and each make target is in the Makefile. A doc that names a command,
// flag or target that does not exist fails here, so the guides cannot
// drift from the binary.
func TestDocsNameWhatExists(t *testing.T) {
	files := []string{"../../README.md", "../../RATIONALE.md"}
	more, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)

	targets := makeTargets(t)
	helpCache := map[string]string{}
	help := func(words ...string) string {
		key := strings.Join(words, " ")
		if h, ok := helpCache[key]; ok {
			return h
		}
		var out bytes.Buffer
		run(context.Background(), append(append([]string{}, words...), "-h"), &out, &out)
		helpCache[key] = out.String()
		return out.String()
	}

	var problems []string
	for _, f := range files {
		for _, ref := range codeRefs(t, f) {
			for _, p := range checkRef(ref, targets, help) {
				problems = append(problems, ref.where+": "+p)
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// A codeRef is one line of code in a doc that starts a `pling` or `make`
// command.
type codeRef struct {
	where string // FILE:LINE
	text  string // from "pling " or "make " to the end of the code span or line
}

var (
	inlineCode = regexp.MustCompile("`([^`\n]+)`")
	plingCmd   = regexp.MustCompile(`(?:^|[\s(]|bin/)pling ([a-z][a-z-]*)(.*)$`)
	makeCmd    = regexp.MustCompile(`(?:^|[\s;(&|])make ([a-z][a-z-]*)`)
	flagWord   = regexp.MustCompile(`(?:^|[\s\[(|])(--?[a-z][a-z0-9-]*)`)
)

// codeRefs returns the code of a markdown file that runs pling or make:
// every line of a fenced block, and every inline code span elsewhere.
func codeRefs(t *testing.T, file string) []codeRef {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(file, "../../")
	var out []codeRef
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	inFence := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		where := name + ":" + itoa(n)
		if inFence {
			out = append(out, codeRef{where, line})
			continue
		}
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			out = append(out, codeRef{where, m[1]})
		}
	}
	return out
}

// checkRef says what in one line of code names something that does not
// exist.
func checkRef(ref codeRef, targets map[string]bool, help func(...string) string) []string {
	var problems []string
	for _, m := range makeCmd.FindAllStringSubmatch(ref.text, -1) {
		if !targets[m[1]] {
			problems = append(problems, "make "+m[1]+": no such Makefile target")
		}
	}
	m := plingCmd.FindStringSubmatch(ref.text)
	if m == nil {
		return problems
	}
	cmd, rest := m[1], m[2]
	switch cmd {
	case "help":
		return problems
	case "is": // "pling is not defined", the browser's error text
		return problems
	}
	if _, ok := registry[cmd]; !ok {
		return append(problems, "pling "+cmd+": no such command")
	}
	// A shell comment, a pipe or the next command ends this one.
	for _, stop := range []string{" #", " |", " &&", ";", " >"} {
		if i := strings.Index(rest, stop); i >= 0 {
			rest = rest[:i]
		}
	}
	words := []string{cmd}
	if f := strings.Fields(rest); len(f) > 0 && regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(f[0]) {
		// A subcommand is a word its parent's help names.
		if strings.Contains(help(cmd), " "+f[0]) && !strings.Contains(help(cmd, f[0]), "unexpected arguments") {
			words = append(words, f[0])
		}
	}
	h := help(words...)
	for _, fm := range flagWord.FindAllStringSubmatch(rest, -1) {
		flag := "-" + strings.TrimLeft(fm[1], "-")
		if flag == "-h" || flag == "-help" {
			continue
		}
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(flag) + `\b`).MatchString(h) {
			problems = append(problems, "pling "+strings.Join(words, " ")+": no flag "+fm[1]+" in its -h")
		}
	}
	return problems
}

// makeTargets reads the Makefile's targets.
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z-]*):`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	return out
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// TestDocsListEveryCommand checks that the README's command table and the
// architecture's row for cmd/pling name every registered command, so a new
// command cannot ship without its line.
func TestDocsListEveryCommand(t *testing.T) {
	for _, tc := range []struct{ file, from, to string }{
		{"../../README.md", "## The `pling` command", "\n## "},
		{"../../docs/architecture.md", "| `cmd/pling` |", "\n"},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			b, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			i := strings.Index(text, tc.from)
			if i < 0 {
				t.Fatalf("no %q in %s", tc.from, tc.file)
			}
			part := text[i+len(tc.from):]
			if j := strings.Index(part, tc.to); j >= 0 {
				part = part[:j]
			}
			for name := range registry {
				if !regexp.MustCompile("`(pling )?" + name + `\b`).MatchString(part) {
					t.Errorf("%s does not name the command %q", tc.file, name)
				}
			}
		})
	}
}
