package main

import (
	"bytes"
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

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/conform"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"

	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/require"
	"github.com/pling-go/pling/internal/testing/syncbuf"
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
	require.Chromium(t)
	t.Setenv("PLING_CDP", "")
	d := demotest.Dist(t)
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
	dir := writeTree(t, map[string]string{"notes.html": page.text})

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
			base = strings.TrimSuffix(startCmd(t, run, args...).servedURL(t), "/")
			continue
		}
		if base == "" {
			t.Fatalf("%s: %q comes before pling serve", commands.name, line)
		}
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], docBase, base)
		}
		var stdout, stderr syncbuf.Buffer
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

// outputLang is the language of a block that shows output, a diagram or
// a synopsis, which no test runs: ```text, a bare ```, ```console.
func outputLang(lang string) bool { return lang == "" || lang == "text" || lang == "console" }

// nodeScript is a ```js block for Node: it loads the module with
// js-shim/node.js (docs/page-api.md §6).
var nodeScript = regexp.MustCompile(`require\("\./js-shim/node\.js"\)`)

// docBlockRunner names the test that runs an unmarked block, or "" when
// none does (the block must be marked). guideRun says the guide's
// commands were already taken by TestGettingStarted.
func docBlockRunner(b docBlock, guideRun bool) string {
	switch b.lang {
	case "go":
		if strings.HasPrefix(strings.TrimSpace(b.text), "package ") {
			return "TestDocGoBlocks (e2e)"
		}
	case "html":
		return "TestDocSnippets (e2e, Chromium)"
	case "ts", "tsx":
		return "TestReact (e2e, tsc)"
	case "json":
		return "TestDocJSONBlocks"
	case "js":
		if nodeScript.MatchString(b.text) {
			return "TestDocScripts (e2e, Node)"
		}
		return "TestDocScripts (e2e, Chromium)"
	case "sh":
		if strings.HasPrefix(b.name, "docs/getting-started.md:") && !guideRun {
			return "TestGettingStarted"
		}
		if strings.HasPrefix(b.name, "docs/operations.md:") {
			return "TestOperationsGuide"
		}
	}
	return ""
}

// TestDocBlocksAccounted: every fenced block of the README and docs/ but
// output (```text, a bare ```, ```console) is run by a named test or
// marked <!-- pling:norun: REASON --> with a reason: ```html by
// TestDocSnippets (e2e), ```ts and ```tsx by TestReact (e2e, tsc), every
// ```json by TestDocJSONBlocks (and MCP configurations by
// TestDocMCPConfigs), ```js by TestDocScripts (e2e: Node for
// js-shim/node.js scripts, Chromium for page scripts), whole-file ```go
// by TestDocGoBlocks (e2e), the getting-started guide's first ```sh block
// by TestGettingStarted, the operations guide's ```sh blocks by
// TestOperationsGuide; any other block (a ```go fragment, ```sh, a
// language no test knows) is marked. A bare block of pling command lines
// is commands, not output: it says ```sh.
func TestDocBlocksAccounted(t *testing.T) {
	guideRun := false
	runs := map[string]int{}
	marked := 0
	for _, b := range docBlocks(t, allDocs(t)...) {
		if strings.Contains(b.text, "pling:norun") {
			t.Errorf("%s: a pling:norun mark inside a block", b.name)
		}
		if b.marked {
			if b.norun == "" {
				t.Errorf("%s: <!-- pling:norun --> needs a reason: <!-- pling:norun: WHY -->", b.name)
			}
			marked++
			continue
		}
		if outputLang(b.lang) {
			if b.lang == "" && bareCommands(b.text) {
				t.Errorf("%s: pling command lines in a block without a language: make it ```sh and run or mark it", b.name)
			}
			continue
		}
		runner := docBlockRunner(b, guideRun)
		if runner == "" {
			t.Errorf("%s: a ```%s block that no test runs: run it in a test or mark it <!-- pling:norun: WHY -->", b.name, b.lang)
			continue
		}
		if runner == "TestGettingStarted" {
			guideRun = true
		}
		runs[runner]++
	}
	if !guideRun {
		t.Error("the guide has no ```sh block for TestGettingStarted to run")
	}
	byTest := map[string]int{}
	for runner, n := range runs {
		name, _, _ := strings.Cut(runner, " ")
		byTest[name] += n
	}
	for name, n := range byTest {
		if !testDefined(t, name) {
			t.Errorf("%d blocks are said to be run by %s, which is not a test of cmd/pling or e2e", n, name)
		}
	}
	t.Logf("blocks run: %v; marked: %d", runs, marked)
}

// bareCommands says every line of the text is a pling command line, not
// a synopsis (no [optional] parts).
func bareCommands(text string) bool {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for _, l := range lines {
		if !plingLine.MatchString(strings.TrimSpace(l)) || strings.Contains(l, "[") {
			return false
		}
	}
	return len(lines) > 0
}

// testDefined says a test function of that name is in cmd/pling or e2e.
func testDefined(t *testing.T, name string) bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../../e2e/*_test.go")
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nfunc "+name+"(t *testing.T) {") {
			return true
		}
	}
	return false
}

// strictJSON decodes one JSON value into v, refusing fields v does not
// have.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// TestDocJSONBlocks: every ```json block of the README and docs/ is JSON
// (one value, or one value a line), and each value that is a wire shape
// is that shape: a Surface request passes wire.DecodeRequest (steps 1–5
// of the check order), a response envelope, describe result and invoke
// result decode into the schema types with unknown fields refused and
// registered codes, a conformance case parses strictly and passes on the
// native host, and a gateway error body is what errors.RenderGateway
// renders for its code. MCP configurations are further checked by
// TestDocMCPConfigs; anything else is checked as JSON only.
func TestDocJSONBlocks(t *testing.T) {
	found := 0
	for _, b := range docBlocks(t, allDocs(t)...) {
		if b.lang != "json" || b.marked {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(b.text))
			n := 0
			for {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("not JSON: %v\n%s", err, b.text)
				}
				n++
				found++
				kind := checkDocJSON(t, raw)
				t.Logf("value %d: %s", n, kind)
			}
			if n == 0 {
				t.Fatal("an empty ```json block")
			}
		})
	}
	if found == 0 {
		t.Fatal("no ```json blocks in the docs")
	}
}

// checkDocJSON checks one value of a ```json block by its shape and says
// which shape it took it for.
func checkDocJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return "JSON (not an object)"
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := top[k]; !ok {
				return false
			}
		}
		return true
	}
	code := func(what string, c string) {
		if _, ok := perr.Lookup(perr.Code(c)); !ok {
			t.Errorf("%s: code %q is in no registry (docs/protocol.md §5)", what, c)
		}
	}
	invokeResult := func(what string, b []byte) {
		var r schema.SurfaceInvokeResult
		if err := strictJSON(b, &r); err != nil {
			t.Errorf("%s is not an invoke result (docs/protocol.md §3.5): %v\n%s", what, err, b)
			return
		}
		if r.Error != nil {
			code(what+".error", r.Error.Code)
		}
	}
	description := func(what string, b []byte) {
		var d schema.SurfaceDescription
		if err := strictJSON(b, &d); err != nil {
			t.Errorf("%s is not a describe result (docs/protocol.md §3.4): %v\n%s", what, err, b)
		}
	}
	switch {
	case has("mcpServers") || has("servers") || has("command"):
		return "an MCP client configuration (TestDocMCPConfigs)"
	case has("protocol", "method"):
		if _, rej := wire.DecodeRequest(raw); rej != nil {
			t.Errorf("the request is refused at step %d: %s %s %v\n%s", rej.Step, rej.Code, rej.Message, rej.Details, raw)
		}
		return "a Surface request (wire.DecodeRequest)"
	case has("protocol", "ok"):
		var r schema.SurfaceResponse
		if err := strictJSON(raw, &r); err != nil {
			t.Errorf("not a response envelope (docs/protocol.md §3.2): %v\n%s", err, raw)
			return "a Surface response"
		}
		switch {
		case r.OK && (len(r.Result) == 0 || r.Error != nil):
			t.Errorf("ok:true without a result, or with an error:\n%s", raw)
		case !r.OK && (len(r.Result) != 0 || r.Error == nil):
			t.Errorf("ok:false without an error, or with a result:\n%s", raw)
		case r.Error != nil:
			code("error", r.Error.Code)
		case bytes.Contains(r.Result, []byte(`"capabilities"`)):
			description("result", r.Result)
		default:
			invokeResult("result", r.Result)
		}
		return "a Surface response (schema.SurfaceResponse)"
	case has("revision", "capabilities"):
		description("the block", raw)
		return "a describe result (schema.SurfaceDescription)"
	case has("name", "steps"):
		c, err := conform.ParseCaseStrict(raw)
		if err != nil {
			t.Errorf("not a conformance case (docs/protocol.md §6): %v", err)
			return "a conformance case"
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if r := conform.Run(ctx, conform.Native{}, c); !r.Pass {
			t.Errorf("the conformance case fails on the native host:\n%s", strings.Join(r.Failures, "\n"))
		}
		return "a conformance case (run on the native host)"
	case has("error") && bytes.Contains(top["error"], []byte(`"type"`)):
		var g perr.GatewayBody
		if err := strictJSON(raw, &g); err != nil {
			t.Errorf("not a gateway error body (docs/gateway.md): %v\n%s", err, raw)
			return "a gateway error body"
		}
		if _, body := perr.RenderGateway(perr.New(g.Error.Code, "", nil)); string(body) != string(raw) {
			t.Errorf("errors.RenderGateway renders %s as\n%s\nthe docs show\n%s", g.Error.Code, body, raw)
		}
		return "a gateway error body (errors.RenderGateway)"
	case has("value") || has("evidence") || has("observation") || has("error"):
		invokeResult("the block", raw)
		return "an invoke result (schema.SurfaceInvokeResult)"
	}
	return "JSON"
}

// TestDocAnchorsUnique: every explicit anchor (<a id="…">) of a doc page
// appears once, so a §-link lands where it says.
func TestDocAnchorsUnique(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	anchor := regexp.MustCompile(`<a id="([^"]+)"></a>`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, m := range anchor.FindAllStringSubmatch(string(b), -1) {
			if seen[m[1]] {
				t.Errorf("%s: anchor %q appears more than once", filepath.Base(f), m[1])
			}
			seen[m[1]] = true
		}
	}
}
