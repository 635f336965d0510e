// Package conform runs conformance cases (docs/protocol.md §7.1) against any host:
// one JSON file per case, a fixture page, and steps of requests with
// subset-matched expectations. A Host loads pages; the runner drives them
// the same way whatever runs underneath (native Go, the test module on
// wazero, Node, Chromium), so a result that differs between hosts is a bug
// in a host, never in the suite. It lives in e2e/, not runtime/, so the
// runtime's dependencies hold none of chromedp, wazero or go-cmp.
package conform

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pling-go/pling/internal/conform/wazerohost"
)

// Module is the test module's file name in a dist directory: pling.wasm
// built with -tags plingfixture, the only build with the fixture entry
// (__plingBridge.fixture) that the wazero, Node and Chromium hosts drive.
// make wasm builds it beside the shipped pling.wasm, which has no such entry.
const Module = wazerohost.TestModule

// Host loads fixture pages.
type Host interface {
	// Name is the host's name in reports: native, wazero, node, chromium.
	Name() string
	// Load builds a page from the case's "page" JSON.
	Load(ctx context.Context, page json.RawMessage) (Page, error)
}

// Page is a loaded fixture page on some host.
type Page interface {
	// Handle sends exact request text and returns the response text.
	Handle(ctx context.Context, request []byte) ([]byte, error)
	// Advance moves the page's fake clock.
	Advance(ctx context.Context, ms int64) error
	// Calls returns the run counts per base action id.
	Calls(ctx context.Context) (map[string]int, error)
	// Declare runs a declare step and returns its outcome JSON.
	Declare(ctx context.Context, decl json.RawMessage) (json.RawMessage, error)
	// Dispose disposes declarations by id.
	Dispose(ctx context.Context, ids json.RawMessage) error
	// CallTool makes a model tool call and returns the response text.
	CallTool(ctx context.Context, call ToolCall) ([]byte, error)
	// Close releases the page.
	Close() error
}

// Case is one conformance case file.
type Case struct {
	Name  string          `json:"name"`
	Rule  string          `json:"rule"`
	Page  json.RawMessage `json:"page"`
	Steps []Step          `json:"steps"`
	// File is where the case was read from.
	File string `json:"-"`
}

// Step is one step of a case: a request (or raw text) with its expected
// response and call counts, a clock advance, a declaration, or a disposal.
type Step struct {
	Request       json.RawMessage `json:"request,omitempty"`
	Raw           *string         `json:"raw,omitempty"`
	RawBase64     *string         `json:"rawBase64,omitempty"` // an extension of raw: exact bytes in base64, for bytes that are not UTF-8
	Expect        json.RawMessage `json:"expect,omitempty"`
	Calls         map[string]int  `json:"calls,omitempty"`
	AdvanceMs     int64           `json:"advanceMs,omitempty"`
	ResumeFrom    string          `json:"resumeFrom,omitempty"`
	Declare       json.RawMessage `json:"declare,omitempty"`
	ExpectDeclare json.RawMessage `json:"expectDeclare,omitempty"`
	Dispose       json.RawMessage `json:"dispose,omitempty"`
	ToolCall      *ToolCall       `json:"toolCall,omitempty"`
	Note          string          `json:"note,omitempty"`
}

// ToolCall is an extension step: a model tool call (docs/protocol.md §4.2 "Model
// tools") with the tool name and the arguments text as a model wrote it.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Session   string `json:"session,omitempty"`
}

// Result is the outcome of one case.
type Result struct {
	Case     *Case
	Pass     bool
	Failures []string
	// Responses are the response texts in step order (nil for non-request
	// steps), for comparing hosts.
	Responses [][]byte
	Duration  time.Duration
}

// LoadDir reads every *.json case under the given files or directories,
// sorted by path, tolerantly (ParseCase).
func LoadDir(paths ...string) ([]*Case, error) { return loadDir(ParseCase, paths) }

// LoadDirStrict is LoadDir with ParseCaseStrict.
func LoadDirStrict(paths ...string) ([]*Case, error) { return loadDir(ParseCaseStrict, paths) }

func loadDir(parse func([]byte) (*Case, error), paths []string) ([]*Case, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	var cases []*Case
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c, err := parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		c.File = f
		cases = append(cases, c)
	}
	return cases, nil
}

// ParseCase parses one case file strictly: unknown fields of the case and
// its steps are errors, so a typo cannot silently skip a check.
func ParseCase(b []byte) (*Case, error) { return parseCase(b, false) }

// ParseCaseStrict is ParseCase that also refuses unknown fields in the case
// and its steps, so a typo in our own suite cannot silently skip a check.
// Cases from elsewhere are read tolerantly (docs/protocol.md §6: readers ignore
// what they do not know).
func ParseCaseStrict(b []byte) (*Case, error) { return parseCase(b, true) }

func parseCase(b []byte, strict bool) (*Case, error) {
	var c Case
	dec := json.NewDecoder(bytes.NewReader(b))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if c.Name == "" {
		return nil, fmt.Errorf("a case needs a name")
	}
	if strict && c.Rule == "" {
		return nil, fmt.Errorf("a case needs the rule it checks")
	}
	if len(c.Page) == 0 {
		c.Page = json.RawMessage(`{}`)
	}
	for i, s := range c.Steps {
		// advanceMs may stand with an action (the clock moves first); a
		// step with only calls checks the counts.
		kinds := 0
		for _, set := range []bool{len(s.Request) > 0, s.Raw != nil, s.RawBase64 != nil, len(s.Declare) > 0, len(s.Dispose) > 0, s.ToolCall != nil} {
			if set {
				kinds++
			}
		}
		if kinds > 1 {
			return nil, fmt.Errorf("step %d: at most one of request, raw, rawBase64, declare, dispose, toolCall", i+1)
		}
		if s.RawBase64 != nil {
			if _, err := base64.StdEncoding.DecodeString(*s.RawBase64); err != nil {
				return nil, fmt.Errorf("step %d: rawBase64: %w", i+1, err)
			}
		}
		if kinds == 0 && s.AdvanceMs == 0 && s.Calls == nil && len(s.Expect) > 0 {
			return nil, fmt.Errorf("step %d: expect without a request", i+1)
		}
	}
	return &c, nil
}

// Run runs one case on a host.
func Run(ctx context.Context, h Host, c *Case) *Result {
	start := time.Now()
	res := &Result{Case: c, Pass: true}
	failf := func(format string, args ...any) {
		res.Pass = false
		res.Failures = append(res.Failures, fmt.Sprintf(format, args...))
	}
	page, err := h.Load(ctx, c.Page)
	if err != nil {
		failf("load page: %v", err)
		res.Duration = time.Since(start)
		return res
	}
	defer page.Close()
	byID := map[string]map[string]any{}
	vars := map[string]any{}
	for i, s := range c.Steps {
		n := i + 1
		res.Responses = append(res.Responses, nil)
		if s.AdvanceMs != 0 {
			if err := page.Advance(ctx, s.AdvanceMs); err != nil {
				failf("step %d: advance: %v", n, err)
			}
		}
		switch {
		case len(s.Request) == 0 && s.Raw == nil && s.RawBase64 == nil && len(s.Declare) == 0 && len(s.Dispose) == 0 && s.ToolCall == nil:
			// Only a clock move or a calls check.
		case len(s.Declare) > 0:
			out, err := page.Declare(ctx, s.Declare)
			if err != nil {
				failf("step %d: declare: %v", n, err)
				continue
			}
			if len(s.ExpectDeclare) > 0 {
				for _, m := range match(s.ExpectDeclare, out, vars) {
					failf("step %d: declare outcome: %s", n, m)
				}
			}
		case len(s.Dispose) > 0:
			if err := page.Dispose(ctx, s.Dispose); err != nil {
				failf("step %d: dispose: %v", n, err)
			}
		default:
			var resp []byte
			var reqID string
			if s.ToolCall != nil {
				resp, err = page.CallTool(ctx, *s.ToolCall)
				if err != nil {
					failf("step %d: tool call: %v", n, err)
					continue
				}
			} else {
				var text []byte
				text, reqID, err = requestText(s, byID)
				if err != nil {
					failf("step %d: %v", n, err)
					continue
				}
				resp, err = page.Handle(ctx, text)
				if err != nil {
					failf("step %d: handle: %v", n, err)
					continue
				}
			}
			res.Responses[i] = resp
			var got map[string]any
			if err := decode(resp, &got); err != nil {
				failf("step %d: the response is not a JSON object: %v", n, err)
				continue
			}
			if reqID != "" {
				byID[reqID] = got
			}
			if len(s.Expect) > 0 {
				if ms := match(s.Expect, resp, vars); len(ms) > 0 {
					for _, m := range ms {
						failf("step %d: %s", n, m)
					}
					failf("step %d: response diff (-expected +got):\n%s", n, diff(s.Expect, resp))
				}
			}
		}
		if s.Calls != nil {
			calls, err := page.Calls(ctx)
			if err != nil {
				failf("step %d: calls: %v", n, err)
				continue
			}
			for _, id := range slices.Sorted(maps.Keys(s.Calls)) {
				if calls[id] != s.Calls[id] {
					failf("step %d: calls[%s] = %d, want %d", n, id, calls[id], s.Calls[id])
				}
			}
		}
	}
	res.Duration = time.Since(start)
	return res
}

// requestText returns the exact text to send: raw as is, or the request
// re-encoded, with resume copied from an earlier response when asked.
func requestText(s Step, byID map[string]map[string]any) ([]byte, string, error) {
	if s.Raw != nil {
		return []byte(*s.Raw), "", nil
	}
	if s.RawBase64 != nil {
		b, err := base64.StdEncoding.DecodeString(*s.RawBase64)
		return b, "", err
	}
	if s.ResumeFrom == "" {
		var probe map[string]any
		if decode(s.Request, &probe) == nil {
			id, _ := probe["id"].(string)
			return s.Request, id, nil
		}
		return s.Request, "", nil
	}
	var req map[string]any
	if err := decode(s.Request, &req); err != nil {
		return nil, "", fmt.Errorf("resumeFrom needs an object request: %v", err)
	}
	prev, ok := byID[s.ResumeFrom]
	if !ok {
		return nil, "", fmt.Errorf("resumeFrom %q: no earlier response with that id", s.ResumeFrom)
	}
	tok, _ := dig(prev, "result", "error", "resume").(string)
	if tok == "" {
		return nil, "", fmt.Errorf("resumeFrom %q: that response has no result.error.resume", s.ResumeFrom)
	}
	req["resume"] = tok
	b, err := json.Marshal(req)
	id, _ := req["id"].(string)
	return b, id, err
}

func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// Any matches any present value in an expectation.
const Any = "<any>"

// match subset-matches got against want (docs/protocol.md §7.1): every object
// field given must be present and match; arrays match element by element
// and have the same length; "<any>" matches any present value; numbers
// compare by value. It returns one line per mismatch.
func match(want, got []byte, vars map[string]any) []string {
	var w, g any
	if err := decode(want, &w); err != nil {
		return []string{fmt.Sprintf("bad expectation: %v", err)}
	}
	if err := decode(got, &g); err != nil {
		return []string{fmt.Sprintf("bad response: %v", err)}
	}
	var out []string
	m := matcher{vars: vars, out: &out}
	m.value("$", w, g, true)
	return out
}

// matcher carries the values saved by "<save:NAME>" across the steps of a
// case. An extension of the format: an expectation string
// "<save:NAME>" matches any present value and keeps it; "<eq:NAME>" and
// "<ne:NAME>" match a value equal to (or different from) the one saved;
// directives combine with commas, e.g. "<save:r2,ne:r1>". It lets a case
// say "the revision changed" without writing a revision down.
type matcher struct {
	vars map[string]any
	out  *[]string
}

func (m matcher) value(path string, w, g any, present bool) {
	out := m.out
	if s, ok := w.(string); ok && s == Any {
		if !present {
			*out = append(*out, path+": missing (want any value)")
		}
		return
	}
	if s, ok := w.(string); ok && len(s) > 2 && s[0] == '<' && s[len(s)-1] == '>' && strings.Contains(s, ":") {
		if !present {
			*out = append(*out, fmt.Sprintf("%s: missing, want %s", path, s))
			return
		}
		for _, d := range strings.Split(s[1:len(s)-1], ",") {
			op, name, _ := strings.Cut(strings.TrimSpace(d), ":")
			saved, have := m.vars[name]
			switch op {
			case "save":
				m.vars[name] = g
			case "eq":
				if !have || !reflect.DeepEqual(saved, g) {
					*out = append(*out, fmt.Sprintf("%s: got %s, want the value saved as %s (%s)", path, show(g), name, show(saved)))
				}
			case "ne":
				if !have || reflect.DeepEqual(saved, g) {
					*out = append(*out, fmt.Sprintf("%s: got %s, want a value other than the one saved as %s", path, show(g), name))
				}
			default:
				*out = append(*out, fmt.Sprintf("%s: unknown directive %q", path, d))
			}
		}
		return
	}
	if !present {
		*out = append(*out, fmt.Sprintf("%s: missing, want %s", path, show(w)))
		return
	}
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %s, want an object", path, show(g)))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(wv)) {
			e, has := gv[k]
			m.value(path+"."+k, wv[k], e, has)
		}
	case []any:
		gv, ok := g.([]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %s, want an array", path, show(g)))
			return
		}
		if len(gv) != len(wv) {
			*out = append(*out, fmt.Sprintf("%s: got %d elements, want %d", path, len(gv), len(wv)))
			return
		}
		for i := range wv {
			m.value(fmt.Sprintf("%s[%d]", path, i), wv[i], gv[i], true)
		}
	case json.Number:
		gn, ok := g.(json.Number)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %s, want %s", path, show(g), wv))
			return
		}
		a, err1 := wv.Float64()
		b, err2 := gn.Float64()
		if err1 != nil || err2 != nil || a != b {
			*out = append(*out, fmt.Sprintf("%s: got %s, want %s", path, gn, wv))
		}
	default:
		if !reflect.DeepEqual(w, g) {
			*out = append(*out, fmt.Sprintf("%s: got %s, want %s", path, show(g), show(w)))
		}
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// diff shows expected against the projection of got onto the expected
// fields, so the diff is about what the case checks.
func diff(want, got []byte) string {
	var w, g any
	_ = decode(want, &w)
	_ = decode(got, &g)
	return lineDiff(indent(w), indent(project(w, g)))
}

func indent(v any) []string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return []string{fmt.Sprint(v)}
	}
	return strings.Split(string(b), "\n")
}

// lineDiff is a longest-common-subsequence diff of two line lists, "-" for
// want, "+" for got. It is here so that pling conform, a product command,
// does not ship a test library (go-cmp) in its binary.
func lineDiff(want, got []string) string {
	n, m := len(want), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			b.WriteString("  " + want[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			b.WriteString("+ " + got[j] + "\n")
			j++
		default:
			b.WriteString("- " + want[i] + "\n")
			i++
		}
	}
	return b.String()
}

func project(w, g any) any {
	wm, ok1 := w.(map[string]any)
	gm, ok2 := g.(map[string]any)
	if ok1 && ok2 {
		out := map[string]any{}
		for k, v := range wm {
			if gv, ok := gm[k]; ok {
				out[k] = project(v, gv)
			}
		}
		return out
	}
	wa, ok1 := w.([]any)
	ga, ok2 := g.([]any)
	if ok1 && ok2 && len(wa) == len(ga) {
		out := make([]any, len(ga))
		for i := range ga {
			out[i] = project(wa[i], ga[i])
		}
		return out
	}
	if s, ok := w.(string); ok && s == Any {
		return Any
	}
	return g
}

// Report writes a readable per-case report and the closing line
// "conformance: N passed, M failed".
func Report(w io.Writer, host string, results []*Result) (passed, failed int) {
	for _, r := range results {
		status := "PASS"
		if !r.Pass {
			status = "FAIL"
			failed++
		} else {
			passed++
		}
		fmt.Fprintf(w, "%s  %-8s %s  (%s)\n", status, host, r.Case.Name, r.Case.Rule)
		if !r.Pass {
			fmt.Fprintf(w, "      file: %s\n", r.Case.File)
			for _, f := range r.Failures {
				for _, line := range strings.Split(strings.TrimRight(f, "\n"), "\n") {
					fmt.Fprintf(w, "      %s\n", line)
				}
			}
		}
	}
	fmt.Fprintf(w, "conformance on %s\n", host)
	fmt.Fprintf(w, "conformance: %d passed, %d failed\n", passed, failed)
	return passed, failed
}
