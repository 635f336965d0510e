package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/pling-go/pling/internal/cliflags"
	"github.com/pling-go/pling/internal/conform/fixture"
)

// benchPage is a fixture page with n plain actions and a no-op, with rate
// limits and loop detection off so that the loop measures the pipeline.
func benchPage(n int) []byte {
	actions := []map[string]any{{"id": "noop", "title": "Do nothing", "run": map[string]any{"return": true}}}
	for i := 0; i < n; i++ {
		actions = append(actions, map[string]any{
			"id": fmt.Sprintf("action.%03d", i), "title": fmt.Sprintf("Action %d", i),
			"params": map[string]any{"sku": map[string]any{"type": "string", "required": true}, "qty": map[string]any{"type": "integer", "minimum": 1}},
			"run":    map[string]any{"return": true},
		})
	}
	b, _ := json.Marshal(map[string]any{
		"config": map[string]any{
			"rateLimit": map[string]any{"describe": map[string]any{"burst": 0}, "invoke": map[string]any{"burst": 0}},
			"loop":      map[string]any{"repeats": 0},
		},
		"states":  map[string]any{"cart.count": 0},
		"actions": actions,
	})
	return b
}

// hostFigures are one host's measurements.
type hostFigures struct {
	ColdStartMs  float64 `json:"coldStartMs,omitempty"`
	ColdCachedMs float64 `json:"coldCachedMs,omitempty"`
	DescribeUs   float64 `json:"describeUs"`
	InvokeUs     float64 `json:"invokeUs"`
}

type sizes struct {
	Raw, Gzip, Brotli int
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cliflags.New("bench", stderr,
		"Usage: pling-bench hosts [flags]",
		"Measures pling.wasm's sizes, cold start and per-call cost on each host in one run, as ratios to native Go.",
	)
	dist := fs.String("dist", "dist", "the directory with pling.wasm, wasm_exec.js and pling.js (make wasm)")
	shim := fs.String("shim", "js-shim", "the js-shim directory")
	iters := fs.Int("n", 2000, "calls per measurement")
	caps := fs.Int("caps", 100, "capabilities on the page for describe")
	out := fs.String("json", "", "also write the figures as JSON to this file")
	_, exit, ok := cliflags.Parse(fs, args)
	if !ok {
		return exit
	}
	page := benchPage(*caps)
	report := map[string]any{"iterations": *iters, "capabilities": *caps}

	sz := map[string]sizes{}
	for _, f := range []string{"pling.wasm", "pling.js"} {
		s, err := fileSizes(filepath.Join(*dist, f))
		if err != nil {
			fmt.Fprintf(stderr, "pling-bench hosts: %v (run make wasm)\n", err)
			return 1
		}
		sz[f] = s
	}
	report["sizes"] = sz

	hosts := map[string]hostFigures{}
	native, err := benchNative(ctx, page, *iters)
	if err != nil {
		fmt.Fprintf(stderr, "pling-bench hosts: native: %v\n", err)
		return 1
	}
	hosts["native"] = native
	if nf, err := benchNode(ctx, *shim, *dist, page, *iters); err != nil {
		fmt.Fprintf(stderr, "pling-bench hosts: node: %v\n", err)
	} else {
		hosts["node"] = nf
	}
	if wf, err := benchWazero(ctx, *dist, page, *iters); err != nil {
		fmt.Fprintf(stderr, "pling-bench hosts: wazero: %v\n", err)
	} else {
		hosts["wazero"] = wf
	}
	report["hosts"] = hosts

	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "file\traw\tgzip\tbrotli")
	for _, f := range []string{"pling.wasm", "pling.js"} {
		s := sz[f]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", f, s.Raw, s.Gzip, s.Brotli)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "host\tcold start ms\tcold (cached) ms\tdescribe(%d) µs\t× native\tinvoke µs\t× native\n", *caps)
	for _, h := range []string{"native", "node", "wazero"} {
		f, ok := hosts[h]
		if !ok {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\n", h)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.2f\t%.1f\t%.2f\n", h, ms(f.ColdStartMs), ms(f.ColdCachedMs),
			f.DescribeUs, f.DescribeUs/native.DescribeUs, f.InvokeUs, f.InvokeUs/native.InvokeUs)
	}
	if w, ok := hosts["wazero"]; ok {
		if n, ok := hosts["node"]; ok {
			fmt.Fprintf(tw, "\nwazero/node invoke\t%.2f\n", w.InvokeUs/n.InvokeUs)
			report["wazeroOverNodeInvoke"] = w.InvokeUs / n.InvokeUs
		}
	}
	tw.Flush()
	if *out != "" {
		b, _ := json.MarshalIndent(report, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "pling-bench hosts: %v\n", err)
			return 1
		}
	}
	return 0
}

func ms(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func fileSizes(path string) (sizes, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return sizes{}, err
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return sizes{Raw: len(b), Gzip: gz.Len(), Brotli: brotliSize(b)}, nil
}

// brotliSize compresses with quality 11 through node's zlib (the same
// figure `make wasm` prints); 0 when node is missing.
func brotliSize(b []byte) int {
	cmd := exec.Command("node", "-e", `const z=require("zlib");const c=[];process.stdin.on("data",d=>c.push(d)).on("end",()=>{process.stdout.write(String(z.brotliCompressSync(Buffer.concat(c),{params:{[z.constants.BROTLI_PARAM_QUALITY]:11}}).length))})`)
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		return 0
	}
	var n int
	fmt.Sscan(string(out), &n)
	return n
}

// timeCalls returns the mean µs per call of handle over fresh requests.
func timeCalls(iters int, method string, extra map[string]any, handle func([]byte) []byte) float64 {
	mk := func(id string) []byte {
		req := map[string]any{"protocol": "pling.surface/0.1", "id": id, "method": method}
		for k, v := range extra {
			req[k] = v
		}
		b, _ := json.Marshal(req)
		return b
	}
	for i := 0; i < 50; i++ {
		handle(mk(fmt.Sprintf("w%s%d", method, i)))
	}
	reqs := make([][]byte, iters)
	for i := range reqs {
		reqs[i] = mk(fmt.Sprintf("b%s%d", method, i))
	}
	start := time.Now()
	for _, r := range reqs {
		handle(r)
	}
	return float64(time.Since(start).Microseconds()) / float64(iters)
}

func benchNative(ctx context.Context, page []byte, iters int) (hostFigures, error) {
	p, err := fixture.Load(page)
	if err != nil {
		return hostFigures{}, err
	}
	h := func(b []byte) []byte { return p.Handle(ctx, b) }
	return hostFigures{
		DescribeUs: timeCalls(iters, "describe", nil, h),
		InvokeUs:   timeCalls(iters, "invoke", map[string]any{"capability": "noop", "input": map[string]any{}}, h),
	}, nil
}

func benchNode(ctx context.Context, shim, dist string, page []byte, iters int) (hostFigures, error) {
	f, err := os.CreateTemp("", "pling-bench-*.json")
	if err != nil {
		return hostFigures{}, err
	}
	defer os.Remove(f.Name())
	f.Write(page)
	f.Close()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(shim, "bench.js"), dist, f.Name(), fmt.Sprint(iters))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return hostFigures{}, fmt.Errorf("%v: %s", err, stderr.String())
	}
	var hf hostFigures
	return hf, json.Unmarshal(out, &hf)
}
