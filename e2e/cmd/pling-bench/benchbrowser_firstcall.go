package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
)

// bbFirstCall is the first call of a lazy page: on a browser with native
// WebMCP, a page whose mirror registered its tools without the module,
// timed from executeTool to the answer (the module fetched, compiled,
// started and the call answered), beside a minimal GOOS=js module that
// answers one call (wasm_exec.js, the module, the call) and the polyfill's
// load plus executeTool. Each sample is a fresh tab after the browser's
// cache is cleared; the ratios are of medians in one run.
type bbFirstCall struct {
	Ours         bbDist  `json:"plingFirstExecuteToolMs"`
	Minimal      bbDist  `json:"minimalModuleCallMs"`
	MinimalBytes int     `json:"minimalModuleBytes"`
	Polyfill     bbDist  `json:"polyfillLoadExecuteToolMs"`
	RatioMinimal float64 `json:"ratioMinimal"`  // ours ÷ minimal, p50; target ≤ 1.5
	RatioPoly    float64 `json:"ratioPolyfill"` // ours ÷ polyfill, p50; target ≤ 2
	// BeforeCallBytes is what the visit fetched before the first call
	// (the document and every resource, transferSize), p50; target ≤ 60
	// KB, and no module: a sample that fetched a .wasm fails the run.
	BeforeCallBytes bbDist `json:"beforeCallBytes"`
}

// firstCallBefore, run in pling's page once its tools are registered and
// before the call, is what the visit fetched so far, in bytes; it throws
// when a module was among it.
const firstCallBefore = `(() => {
  const es = performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"));
  const wasm = es.filter((e) => /\.wasm($|\?)/.test(e.name)).map((e) => e.name);
  if (wasm.length) throw new Error("a module was fetched before the call: " + wasm.join(", "));
  return es.reduce((n, e) => n + (e.transferSize || 0), 0);
})()`

const tinyMain = `package main

import "syscall/js"

func main() {
	js.Global().Set("tinyAnswer", js.FuncOf(func(this js.Value, args []js.Value) any { return "OK: " + args[0].String() }))
	js.Global().Call("__tinyReady")
	select {}
}
`

// buildTiny builds the minimal GOOS=js module as make wasm builds ours.
func buildTiny(ctx context.Context) ([]byte, error) {
	dir, err := os.MkdirTemp("", "pling-bench-tiny-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module tiny\n\ngo 1.22\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(tinyMain), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", "tiny.wasm", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the minimal module: %v: %s", err, out)
	}
	return os.ReadFile(filepath.Join(dir, "tiny.wasm"))
}

const firstCallPlingPage = `<!doctype html><html><head><meta charset="utf-8"><title>first call</title><link rel="icon" href="data:,">
<script src="/pling/pling.js" data-expose="*"></script>
<script>
pling.action({ id: "note.add", title: "Add a note", params: { text: { type: "string", required: true } }, run: () => true });
pling.action({ id: "orders.search", title: "Search orders", risk: "read", run: () => [] });
pling.action({ id: "orders.wipe", title: "Delete every order", risk: "destructive", run: () => true });
</script></head><body></body></html>`

const firstCallBlankPage = `<!doctype html><html><head><meta charset="utf-8"><title>blank</title><link rel="icon" href="data:,"></head><body></body></html>`

const firstCallOurs = `(async () => {
  const mc = document.modelContext;
  let tool;
  for (let i = 0; !tool && i < 500; i++) {
    tool = (await mc.getTools()).find((t) => t.name === "note_add");
    if (!tool) await new Promise((r) => setTimeout(r, 10));
  }
  if (!tool) throw new Error("no note_add registered");
  if (pling._pending === null) throw new Error("the module started before the call");
  window.__beforeCall = ` + firstCallBefore + `;
  const t0 = performance.now();
  const out = await mc.executeTool(tool, { text: "hi" });
  const ms = performance.now() - t0;
  if (!String(out).startsWith("OK")) throw new Error("answered " + out);
  return ms;
})()`

const firstCallMinimal = `(async () => {
  const t0 = performance.now();
  await new Promise((ok, fail) => { const s = document.createElement("script"); s.src = "/pling/wasm_exec.js"; s.onload = ok; s.onerror = fail; document.head.appendChild(s); });
  const go = new Go();
  const ready = new Promise((r) => { window.__tinyReady = r; });
  const r = await WebAssembly.instantiateStreaming(fetch("/bench/first/tiny.wasm"), go.importObject);
  go.run(r.instance);
  await ready;
  const out = window.tinyAnswer(JSON.stringify({ text: "hi" }));
  const ms = performance.now() - t0;
  if (!out.startsWith("OK")) throw new Error("answered " + out);
  return ms;
})()`

const firstCallPolyfill = `(async () => {
  const t0 = performance.now();
  await new Promise((ok, fail) => { const s = document.createElement("script"); s.src = "/bench/webmcp-polyfill.js"; s.onload = ok; s.onerror = fail; document.head.appendChild(s); });
  const mc = document.modelContext;
  await mc.registerTool({ name: "note_add", description: "Add a note", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }, execute: (a) => "OK: " + a.text });
  const tool = (await mc.getTools()).find((t) => t.name === "note_add");
  const out = await mc.executeTool(tool, JSON.stringify({ text: "hi" }));
  const ms = performance.now() - t0;
  if (!JSON.stringify(out).includes("OK")) throw new Error("answered " + JSON.stringify(out));
  return ms;
})()`

// firstCall measures bbFirstCall. The native browser visits the page on
// shop.test (mapped to the bench server, treated as secure), not on a
// development origin; the polyfill runs in b, whose document has no
// native model context for it to defer to.
func (b *bbBrowser) firstCall(ctx context.Context, bin, base string, mux *http.ServeMux, o bbOptions, rep *bbReport) error {
	tiny, err := buildTiny(ctx)
	if err != nil {
		return err
	}
	mux.HandleFunc("/bench/first/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
		w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
		w.Header().Set("Cross-Origin-Resource-Policy", "same-origin")
		switch r.URL.Path {
		case "/bench/first/tiny.wasm":
			w.Header().Set("Content-Type", "application/wasm")
			w.Write(tiny)
		case "/bench/first/pling.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(firstCallPlingPage))
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(firstCallBlankPage))
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	shop := "http://shop.test:" + u.Port()
	nb, err := startBenchBrowser(bin, chromedp.Flag("enable-experimental-web-platform-features", true),
		chromedp.Flag("host-resolver-rules", "MAP shop.test 127.0.0.1"),
		chromedp.Flag("unsafely-treat-insecure-origin-as-secure", shop))
	if err != nil {
		return err
	}
	defer nb.close()
	var before []float64
	sample := func(br *bbBrowser, page, expr string) (float64, error) {
		if err := br.clearCache(); err != nil {
			return 0, err
		}
		tctx, done, err := br.tab(false)
		if err != nil {
			return 0, err
		}
		defer done()
		if err := navigate(tctx, page); err != nil {
			return 0, err
		}
		ms, err := eval[float64](tctx, time.Minute, expr)
		if err == nil && expr == firstCallOurs {
			var n float64
			if n, err = eval[float64](tctx, time.Minute, "window.__beforeCall"); err == nil {
				before = append(before, n)
			}
		}
		return ms, err
	}
	var ours, minimal, poly []float64
	n := max(o.visits, 3)
	for i := 0; i < n; i++ {
		v, err := sample(nb, shop+"/bench/first/pling.html", firstCallOurs)
		if err != nil {
			return fmt.Errorf("pling's first call: %w", err)
		}
		ours = append(ours, v)
		if v, err = sample(nb, shop+"/bench/first/blank.html", firstCallMinimal); err != nil {
			return fmt.Errorf("the minimal module: %w", err)
		}
		minimal = append(minimal, v)
		if v, err = sample(b, base+"/bench/first/blank.html", firstCallPolyfill); err != nil {
			return fmt.Errorf("the polyfill: %w", err)
		}
		poly = append(poly, v)
	}
	f := &bbFirstCall{Ours: distOf(ours), Minimal: distOf(minimal), MinimalBytes: len(tiny), Polyfill: distOf(poly), BeforeCallBytes: distOf(before)}
	f.RatioMinimal = ratio(f.Ours.P50, f.Minimal.P50)
	f.RatioPoly = ratio(f.Ours.P50, f.Polyfill.P50)
	rep.FirstCall = f
	return nil
}
