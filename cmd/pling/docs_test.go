package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A docBlock is one fenced code block of the README or docs/.
type docBlock struct {
	name   string // FILE:LINE
	lang   string
	text   string
	norun  string // the reason of <!-- pling:norun: REASON --> on the line before
	marked bool   // that line is such a mark
}

var (
	fenced    = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```")
	norunLine = regexp.MustCompile(`<!--\s*pling:norun:?\s*(.*?)\s*-->\s*$`)
)

// docBlocks reads the fenced blocks of the files (paths from the
// repository's root).
func docBlocks(t *testing.T, files ...string) []docBlock {
	t.Helper()
	var out []docBlock
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, m := range fenced.FindAllStringSubmatchIndex(text, -1) {
			blk := docBlock{name: fmt.Sprintf("%s:%d", f, strings.Count(text[:m[0]], "\n")+1), lang: text[m[2]:m[3]], text: text[m[4]:m[5]]}
			before := strings.TrimRight(text[:m[0]], "\n")
			if i := strings.LastIndexByte(before, '\n'); i >= 0 {
				before = before[i+1:]
			}
			if nm := norunLine.FindStringSubmatch(before); nm != nil {
				blk.norun, blk.marked = nm[1], true
			}
			out = append(out, blk)
		}
	}
	return out
}

// allDocs is the README and every page of docs/.
func allDocs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, f := range files {
		out = append(out, strings.TrimPrefix(filepath.ToSlash(f), "../../"))
	}
	return out
}

// shellWords splits one command line as sh would for the plain words and
// single-quoted strings the docs use; a trailing & is dropped.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "&")) {
		switch {
		case r == '\'':
			quoted = !quoted
			in = true
		case r == ' ' && !quoted:
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestDocMCPConfigs: every MCP client configuration in the README and
// docs/ (a ```json block with mcpServers or servers, or a bare {command,
// args}) is JSON whose command is pling and whose args are a valid
// pling mcp invocation by its own flag set, with an http(s) page URL or
// a fixture; a VS Code configuration says type stdio.
func TestDocMCPConfigs(t *testing.T) {
	type server struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	}
	found := 0
	for _, b := range docBlocks(t, allDocs(t)...) {
		if b.lang != "json" || !strings.Contains(b.text, `"command"`) {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			if b.norun != "" {
				t.Skipf("marked pling:norun: %s", b.norun)
			}
			var doc struct {
				MCPServers map[string]server `json:"mcpServers"`
				Servers    map[string]server `json:"servers"`
				server
			}
			dec := json.NewDecoder(strings.NewReader(b.text))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("not an MCP client configuration: %v\n%s", err, b.text)
			}
			servers := map[string]server{}
			for k, s := range doc.MCPServers {
				servers["mcpServers."+k] = s
			}
			for k, s := range doc.Servers {
				if s.Type != "stdio" {
					t.Errorf("servers.%s: type %q, want stdio (VS Code's .vscode/mcp.json)", k, s.Type)
				}
				servers["servers."+k] = s
			}
			if doc.Command != "" {
				servers["(bare)"] = doc.server
			}
			if len(servers) == 0 {
				t.Fatal("no server in the block")
			}
			for name, s := range servers {
				found++
				if filepath.Base(s.Command) != "pling" {
					t.Errorf("%s: command %q, want pling", name, s.Command)
				}
				if len(s.Args) == 0 || s.Args[0] != "mcp" {
					t.Errorf("%s: args %q do not start with mcp", name, s.Args)
					continue
				}
				// A session file the docs name is the reader's; the flags
				// are checked with one that exists, as only its owner may read.
				args := append([]string(nil), s.Args[1:]...)
				for i := 1; i < len(args); i++ {
					if args[i-1] == "--session-file" {
						f := filepath.Join(t.TempDir(), "token")
						if err := os.WriteFile(f, []byte("pl1.k.x"), 0o600); err != nil {
							t.Fatal(err)
						}
						args[i] = f
					}
				}
				var stderr strings.Builder
				a, exit, ok := parseMCPArgs(args, &stderr)
				if !ok {
					t.Errorf("%s: pling %s is refused (exit %d):\n%s", name, strings.Join(s.Args, " "), exit, stderr.String())
					continue
				}
				if !strings.HasPrefix(a.target, "http://") && !strings.HasPrefix(a.target, "https://") && !strings.HasPrefix(a.target, "fixture:") {
					t.Errorf("%s: target %q is not a page URL or fixture:PATH", name, a.target)
				}
				for k := range s.Env {
					if k == "PLING_SESSION" {
						t.Errorf("%s: a token in the configuration file: use --session-file", name)
					}
				}
			}
		})
	}
	if found < 4 {
		t.Errorf("found %d MCP client configurations in the docs, want at least 4 (Claude Desktop, VS Code, Cursor, a generic client)", found)
	}
}

// TestParseMCPArgsRefuses: the check above can fail: parseMCPArgs
// refuses what pling mcp refuses.
func TestParseMCPArgsRefuses(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--nope", "http://x/"},
		{"http://a/", "http://b/"},
		{"--fixture", "f.json", "http://a/"},
		{"--poll", "-1s", "http://a/"},
		{"--poll", "soon", "http://a/"},
		{"--session", "t", "--session-file", "f", "http://a/"},
	} {
		if _, _, ok := parseMCPArgs(args, io.Discard); ok {
			t.Errorf("parseMCPArgs(%q) accepted", args)
		}
	}
}

// TestGettingStarted is the acceptance check of docs/getting-started.md
// §1: the page written there, saved verbatim, served with the guide's own
// pling serve --dir, is described and invoked on the first try by the
// guide's pling describe and pling invoke command lines (run in process,
// the page in headless Chromium), and describe prints what the guide
// shows.
func TestGettingStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	if _, err := os.Stat(os.Getenv("PLING_CHROMIUM")); os.Getenv("PLING_CHROMIUM") != "" && err != nil {
		t.Skip("no browser")
	}
	t.Setenv("PLING_CDP", "")
	d := builtDist(t)
	blocks := docBlocks(t, "docs/getting-started.md")
	var page, commands, output *docBlock
	for i := range blocks {
		b := &blocks[i]
		switch {
		case page == nil && b.lang == "html":
			page = b
		case page != nil && commands == nil && b.lang == "sh" && b.norun == "":
			commands = b
		case commands != nil && output == nil && b.lang == "text":
			output = b
		}
	}
	if page == nil || commands == nil || output == nil {
		t.Fatal("docs/getting-started.md lacks its page (```html), its commands (```sh) or describe's output (```text)")
	}
	if n := strings.Count(page.text, "pling.action({"); n != 3 {
		t.Errorf("the guide's page makes %d pling.action calls, want 3", n)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.html"), []byte(page.text), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const docBase = "http://127.0.0.1:8080"
	base := ""
	lines := strings.Split(strings.TrimSpace(commands.text), "\n")
	for _, line := range lines {
		w := shellWords(line)
		if len(w) < 2 || w[0] != "pling" {
			t.Fatalf("%s: %q is not a pling command", commands.name, line)
		}
		args := w[1:]
		if args[0] == "serve" {
			for i := range args {
				if i > 0 && args[i-1] == "--dir" && args[i] == "." {
					args[i] = dir
				}
			}
			args = append(args, "--addr", "127.0.0.1:0", "--dist", d)
			srvCtx, stop := context.WithCancel(ctx)
			var out syncBuffer
			done := make(chan int, 1)
			go func() { done <- run(srvCtx, args, &out, &out) }()
			t.Cleanup(func() { stop(); <-done })
			addr := regexp.MustCompile(`pling serve: (http://[^/ ]+)/`)
			for base == "" {
				select {
				case code := <-done:
					t.Fatalf("pling %s exited %d:\n%s", strings.Join(args, " "), code, out.String())
				case <-time.After(50 * time.Millisecond):
				}
				if m := addr.FindStringSubmatch(out.String()); m != nil {
					base = m[1]
				}
				if ctx.Err() != nil {
					t.Fatalf("pling serve printed no address:\n%s", out.String())
				}
			}
			continue
		}
		if base == "" {
			t.Fatalf("%s: %q comes before pling serve", commands.name, line)
		}
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], docBase, base)
		}
		var stdout, stderr syncBuffer
		code := run(ctx, args, &stdout, &stderr)
		t.Logf("pling %s → exit %d\n%s", strings.Join(args, " "), code, stdout.String())
		if code != 0 {
			t.Fatalf("pling %s: exit %d, want 0 on the first try\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		switch args[0] {
		case "describe":
			for _, want := range strings.Split(strings.TrimSpace(output.text), "\n") {
				if strings.HasPrefix(want, "revision ") {
					continue
				}
				want = strings.ReplaceAll(want, docBase, base)
				if !strings.Contains(stdout.String(), want+"\n") {
					t.Errorf("pling describe does not print the guide's line %q; it printed:\n%s", want, stdout.String())
				}
			}
		case "invoke":
			for _, want := range []string{"ok: notes.add", "value: 1"} {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("pling invoke printed no %q:\n%s", want, stdout.String())
				}
			}
		default:
			t.Errorf("%s: no check for pling %s", commands.name, args[0])
		}
	}
}

// plingLine is a command line that runs pling (after VAR=value
// assignments).
var plingLine = regexp.MustCompile(`^(?:[A-Z_]+=(?:"[^"]*"|\S+)\s+)*pling\s`)

// TestDocBlocksAccounted: every code block of the README and docs/ that
// a test can run is run, or is marked <!-- pling:norun: REASON --> with a
// reason: ```html by TestDocSnippets (e2e), ```ts and ```tsx by TestReact
// (e2e, tsc), ```json MCP configurations by TestDocMCPConfigs, whole-file
// ```go by TestDocGoBlocks (e2e); a ```go fragment and a ```sh block with
// a pling command line are marked, except the getting-started guide's
// commands, which TestGettingStarted runs. The guide runs or marks every
// block but its ```text output.
func TestDocBlocksAccounted(t *testing.T) {
	guideRun := false
	for _, b := range docBlocks(t, allDocs(t)...) {
		guide := strings.HasPrefix(b.name, "docs/getting-started.md:")
		if strings.Contains(b.text, "pling:norun") {
			t.Errorf("%s: a pling:norun mark inside a block", b.name)
		}
		if b.marked {
			if b.norun == "" {
				t.Errorf("%s: <!-- pling:norun --> needs a reason: <!-- pling:norun: WHY -->", b.name)
			}
			continue
		}
		switch b.lang {
		case "go":
			if !strings.HasPrefix(strings.TrimSpace(b.text), "package ") {
				t.Errorf("%s: a ```go fragment cannot be built: make it a whole file or mark it <!-- pling:norun: WHY -->", b.name)
			}
		case "sh":
			for _, l := range strings.Split(strings.TrimSpace(b.text), "\n") {
				if !plingLine.MatchString(strings.TrimSpace(l)) {
					if guide {
						t.Errorf("%s: the guide's command %q is not a pling command TestGettingStarted can run: mark the block", b.name, l)
					}
					continue
				}
				if !guide || guideRun {
					t.Errorf("%s: %q is not run by a test: mark the block <!-- pling:norun: WHY -->", b.name, strings.TrimSpace(l))
				}
			}
			if guide {
				guideRun = true
			}
		case "json":
			if guide && !strings.Contains(b.text, `"command"`) {
				t.Errorf("%s: a ```json block of the guide that is not an MCP configuration", b.name)
			}
		case "html", "ts", "tsx", "text":
		default:
			if guide {
				t.Errorf("%s: a ```%s block of the guide that no test runs", b.name, b.lang)
			}
		}
	}
	if !guideRun {
		t.Error("the guide has no ```sh block for TestGettingStarted to run")
	}
}
