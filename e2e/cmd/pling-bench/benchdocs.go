package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pling-go/pling/internal/cliflags"
)

// A generated block of docs/benchmarks.md: the lines between
// "<!-- generated: NAME -->" and "<!-- end -->" are the figures of
// e2e/artifacts/NAME.json, with the command that measured them and when;
// everything outside the markers is written by hand.
const (
	blockOpen  = "<!-- generated: "
	blockClose = " -->"
	blockEnd   = "<!-- end -->"
)

// docBlock is one artifact the docs show: its block's name (the artifact
// is NAME.json), how it was measured, and how its figures read.
type docBlock struct {
	name   string
	method string
	render func(art []byte, w io.Writer) (date string, err error)
}

// docBlocks are the blocks, in the order the docs give them.
var docBlocks = []docBlock{
	{"bench-modsize", "`make bench-modsize` (`pling-bench modsize`)", renderModsizeBlock},
	{"bench-agent", "`make bench-agent` (`pling-bench agent --runs N`)", renderAgentBlock},
	{"bench-browser", "`make bench-browser` (`pling-bench browser`)", renderBrowserBlock},
	{"bench-authority", "`make bench-authority` (`pling-bench authority`)", renderAuthorityBlock},
	{"bench-gateway", "`make bench-gateway` (`go test -run '^TestLoad200Streams$' ./gateway/` with `PLING_BENCH_OUT`)", renderGatewayBlock},
}

func runBenchDocs(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := cliflags.New("docs", stderr,
		"Usage: pling-bench docs [flags] [BLOCK…]",
		"Writes each generated block of the doc (<!-- generated: BLOCK --> … <!-- end -->) from its artifact, BLOCK.json; a block whose artifact is missing is left as it is. Blocks: "+strings.Join(docBlockNames(), ", ")+" (default all).",
	)
	artifacts := fl.String("artifacts", filepath.Join("e2e", "artifacts"), "the directory the benchmarks wrote their JSON to")
	doc := fl.String("doc", filepath.Join("docs", "benchmarks.md"), "the document to update")
	names, exit, ok := cliflags.Parse(fl, args)
	if !ok {
		return exit
	}
	fail := failer(stderr, "docs")
	for _, n := range names {
		if !slices.Contains(docBlockNames(), n) {
			return fail("no block %q (blocks: %s)", n, strings.Join(docBlockNames(), ", "))
		}
	}
	old, err := os.ReadFile(*doc)
	if err != nil {
		return fail("%v", err)
	}
	out, notes, err := generateDocs(string(old), names, func(name string) ([]byte, error) {
		return os.ReadFile(filepath.Join(*artifacts, name+".json"))
	})
	for _, n := range notes {
		fmt.Fprintf(stderr, "pling-bench docs: %s\n", n)
	}
	if err != nil {
		return fail("%s: %v", *doc, err)
	}
	if out == string(old) {
		fmt.Fprintf(stdout, "%s: unchanged\n", *doc)
		return 0
	}
	if err := os.WriteFile(*doc, []byte(out), 0o644); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(stdout, "%s: written\n", *doc)
	return 0
}

func docBlockNames() []string {
	names := make([]string, len(docBlocks))
	for i, b := range docBlocks {
		names[i] = b.name
	}
	return names
}

// docSpan is one generated block of a document: its name and the lines
// between its markers, [from, to).
type docSpan struct {
	name     string
	from, to int
}

// docSpans finds the generated blocks of doc's lines. A block opens with
// a marker line naming a known block and ends at the next end marker;
// an unknown name, a block opened twice, one opened inside another, an
// end with no block open and a block left open are errors, so that a
// generator never writes over prose.
func docSpans(lines []string) ([]docSpan, error) {
	var spans []docSpan
	open := -1
	seen := map[string]bool{}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, blockOpen):
			name, ok := strings.CutSuffix(strings.TrimPrefix(t, blockOpen), blockClose)
			if !ok || !slices.Contains(docBlockNames(), name) {
				return nil, fmt.Errorf("line %d: %q opens no known block (blocks: %s)", i+1, t, strings.Join(docBlockNames(), ", "))
			}
			if open >= 0 {
				return nil, fmt.Errorf("line %d: block %s opens inside block %s", i+1, name, spans[open].name)
			}
			if seen[name] {
				return nil, fmt.Errorf("line %d: block %s is there twice", i+1, name)
			}
			seen[name] = true
			spans = append(spans, docSpan{name: name, from: i + 1})
			open = len(spans) - 1
		case t == blockEnd:
			if open < 0 {
				return nil, fmt.Errorf("line %d: %s with no block open", i+1, blockEnd)
			}
			spans[open].to = i
			open = -1
		case strings.Contains(t, "<!-- generated") || strings.Contains(t, "<!-- end"):
			return nil, fmt.Errorf("line %d: %q is not a block marker (%sNAME%s, %s, each on a line of its own)", i+1, t, blockOpen, blockClose, blockEnd)
		}
	}
	if open >= 0 {
		return nil, fmt.Errorf("block %s is not closed (%s)", spans[open].name, blockEnd)
	}
	return spans, nil
}

// generateDocs rewrites the blocks of doc named in only (all when empty)
// from their artifacts (read returns NAME.json's bytes). A block whose
// artifact does not exist is left as it is, and a note says so; a block
// the doc lacks is an error, as is an artifact that does not decode.
func generateDocs(doc string, only []string, read func(name string) ([]byte, error)) (string, []string, error) {
	lines := strings.Split(doc, "\n")
	spans, err := docSpans(lines)
	if err != nil {
		return doc, nil, err
	}
	var notes []string
	// Rewrite from the last block so that earlier spans keep their lines.
	for i := len(docBlocks) - 1; i >= 0; i-- {
		b := docBlocks[i]
		if len(only) > 0 && !slices.Contains(only, b.name) {
			continue
		}
		k := slices.IndexFunc(spans, func(s docSpan) bool { return s.name == b.name })
		if k < 0 {
			return doc, notes, fmt.Errorf("no block %s%s%s … %s to write %s.json into", blockOpen, b.name, blockClose, blockEnd, b.name)
		}
		art, err := read(b.name)
		if errors.Is(err, fs.ErrNotExist) {
			notes = append(notes, fmt.Sprintf("%s.json is missing: block %s left as it is", b.name, b.name))
			continue
		}
		if err != nil {
			return doc, notes, err
		}
		body, err := renderDocBlock(b, art)
		if err != nil {
			return doc, notes, fmt.Errorf("%s.json: %v", b.name, err)
		}
		s := spans[k]
		lines = slices.Concat(lines[:s.from], strings.Split(body, "\n"), lines[s.to:])
	}
	slices.Reverse(notes)
	return strings.Join(lines, "\n"), notes, nil
}

// renderDocBlock is a block's lines, without its markers: where the
// figures come from, then the figures.
func renderDocBlock(b docBlock, art []byte) (string, error) {
	var fig bytes.Buffer
	date, err := b.render(art, &fig)
	if err != nil {
		return "", err
	}
	if date == "" {
		date = "an unrecorded date"
	}
	head := fmt.Sprintf("Generated by `pling-bench docs` from `e2e/artifacts/%s.json`: measured by %s on %s.", b.name, b.method, date)
	body := strings.TrimRight(fig.String(), "\n")
	if strings.Contains(body, blockOpen) || strings.Contains(body, blockEnd) {
		return "", errors.New("the figures hold a block marker")
	}
	return "\n" + head + "\n\n" + body + "\n", nil
}

func renderAgentBlock(art []byte, w io.Writer) (string, error) {
	var rep agentReport
	if err := json.Unmarshal(art, &rep); err != nil {
		return "", err
	}
	io.WriteString(w, agentMarkdown(&rep))
	return rep.Date, nil
}

func renderAuthorityBlock(art []byte, w io.Writer) (string, error) {
	var rep baReport
	if err := json.Unmarshal(art, &rep); err != nil {
		return "", err
	}
	var md bytes.Buffer
	printBenchAuthority(&md, &rep)
	// The report's own title is the doc's section, not a heading of its
	// own inside it.
	_, rest, _ := strings.Cut(md.String(), "\n\n")
	io.WriteString(w, rest)
	return rep.Date, nil
}

func renderBrowserBlock(art []byte, w io.Writer) (string, error) {
	var rep bbReport
	if err := json.Unmarshal(art, &rep); err != nil {
		return "", err
	}
	fmt.Fprintf(w, "%s, %d CPUs (load %s at the start, %s at the end), beside %s %s.\n\n", rep.Browser, rep.Machine.CPUs, rep.Machine.LoadStart, rep.Machine.LoadEnd, rep.Polyfill.Package, rep.Polyfill.Version)
	writeTargetsTable(w, rep.Targets)
	return rep.Date, nil
}

// writeTargetsTable is a report's targets as a Markdown table.
func writeTargetsTable(w io.Writer, ts []bbTarget) {
	fmt.Fprintln(w, "| target | measured | verdict |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, t := range ts {
		verdict := "**missed**"
		if t.Met {
			verdict = "met"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", mdCell(t.Name), mdCell(t.Detail), verdict)
	}
}

// mdCell is s made safe for one cell of a Markdown table.
func mdCell(s string) string {
	return strings.NewReplacer("|", "/", "\n", " ").Replace(s)
}

// gatewayReport is what TestLoad200Streams writes (gateway/load_test.go).
type gatewayReport struct {
	Date           string  `json:"date"`
	Streams        int     `json:"streams"`
	BytesPerStream int     `json:"bytesPerStream"`
	Seconds        float64 `json:"seconds"`
	HeapBefore     int     `json:"heapBeforeMiB"`
	HeapPeak       int     `json:"heapPeakMiB"`
	HeapAfter      int     `json:"heapAfterMiB"`
	DirectMicros   int64   `json:"chunkLatencyDirectMicros"`
	GatewayMicros  int64   `json:"chunkLatencyGatewayMicros"`
	Ratio          float64 `json:"chunkLatencyRatio"`
}

func renderGatewayBlock(art []byte, w io.Writer) (string, error) {
	var rep gatewayReport
	if err := json.Unmarshal(art, &rep); err != nil {
		return "", err
	}
	fmt.Fprintln(w, "| figure | measured |")
	fmt.Fprintln(w, "|---|---|")
	fmt.Fprintf(w, "| %d concurrent streams of %d B each, loopback | all done in %.1f s |\n", rep.Streams, rep.BytesPerStream, rep.Seconds)
	fmt.Fprintf(w, "| heap before / peak / after | %d / **%d** / %d MiB |\n", rep.HeapBefore, rep.HeapPeak, rep.HeapAfter)
	fmt.Fprintf(w, "| added latency per chunk, gateway ÷ upstream direct, p50 | **%.2f×** (%d vs %d µs) |\n", rep.Ratio, rep.GatewayMicros, rep.DirectMicros)
	return rep.Date, nil
}

// reportDate is when a benchmark report is written, as the docs give it.
func reportDate() string { return time.Now().UTC().Format("2006-01-02 15:04 UTC") }

// writeArtifact writes a benchmark's report to path (making its
// directory) as the JSON pling-bench docs reads: indented by two spaces,
// with a final newline. It returns path without its extension, the stem
// of the Markdown, chart or snapshots a benchmark writes beside it.
func writeArtifact(path string, rep any) (stem string, err error) {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return strings.TrimSuffix(path, filepath.Ext(path)), nil
}
