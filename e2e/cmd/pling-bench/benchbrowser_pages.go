package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing/fstest"

	"github.com/andybalholm/brotli"
)

// The pages and in-page code of pling-bench browser. Every figure is taken
// in the page with performance.now() (cross-origin isolated, so 5 µs
// resolution); Go only drives the browser and does the arithmetic.

// benchBlankPage is the empty document the script-load measurement
// evaluates each script in, one fresh iframe per sample.
const benchBlankPage = `<!doctype html><html><head><meta charset="utf-8"><title>blank</title><link rel="icon" href="data:,"></head><body></body></html>
`

// benchCapsPage declares ?n= plain actions (and a no-op with ?noop) via
// pling.action, with the rate limits and loop detection off so that a loop
// measures the call, not the budget.
const benchCapsPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>pling: N capabilities</title><link rel="icon" href="data:,">
<script src="/pling/pling.js" data-expose="*" data-webmcp="off"></script>
<script>
pling.configure({ rateLimit: { describe: { burst: 0 }, invoke: { burst: 0 } }, loop: { repeats: 0 } });
(function () {
  var q = new URLSearchParams(location.search), n = Number(q.get("n")) || 0;
  for (var i = 0; i < n; i++) {
    pling.action({
      id: "action." + String(i).padStart(4, "0"), title: "Action " + i,
      params: { sku: { type: "string", required: true }, qty: { type: "integer", minimum: 1 } },
      run: function () { return true; }
    });
  }
  if (q.has("noop")) pling.action({ id: "noop", title: "Do nothing", run: function () { return true; } });
})();
</script></head><body></body></html>
`

// benchPolyfillPage registers the same ?n= tools (and a no-op) with the
// WebMCP polyfill, all at once with Promise.all.
const benchPolyfillPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>polyfill: N tools</title><link rel="icon" href="data:,">
<script src="/bench/webmcp-polyfill.js"></script>
<script>
(function () {
  var q = new URLSearchParams(location.search), n = Number(q.get("n")) || 0, tools = [];
  for (var i = 0; i < n; i++) {
    tools.push({
      name: "action." + String(i).padStart(4, "0"), description: "Action " + i,
      inputSchema: { type: "object", properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 } }, required: ["sku"] },
      execute: function () { return true; }
    });
  }
  if (q.has("noop")) tools.push({ name: "noop", description: "Do nothing", inputSchema: { type: "object", properties: {} }, execute: function () { return true; } });
  var t0 = performance.now();
  window.polyReady = Promise.all(tools.map(function (t) { return document.modelContext.registerTool(t); }))
    .then(function () { return performance.now() - t0; });
})();
</script></head><body></body></html>
`

// benchVisitPage loads the shim the way a page does, with the module from
// ?wasm= (a URL whose caching headers an experiment chooses) and, with
// ?stream=0, without WebAssembly.instantiateStreaming (the shim's
// arrayBuffer fallback).
const benchVisitPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>pling: a visit</title><link rel="icon" href="data:,">
<script>
(function () {
  var q = new URLSearchParams(location.search);
  if (q.get("stream") === "0") WebAssembly.instantiateStreaming = undefined;
  var s = document.createElement("script");
  s.src = "/pling/pling.js";
  s.dataset.expose = "*";
  s.dataset.webmcp = "off";
  if (q.get("wasm")) s.dataset.wasm = q.get("wasm");
  s.onload = function () { pling.action({ id: "hello", title: "Say hello", run: function () { return "hi"; } }); };
  document.head.appendChild(s);
})();
</script></head><body><h1>A visit</h1></body></html>
`

// benchLoadProbe runs before any page script (Page.addScriptToEvaluateOnNewDocument):
// it times the module's streaming compile and instantiation without
// changing what the shim asks of the browser.
const benchLoadProbe = `(function () {
  var t = window.__plingLoad = {}, W = WebAssembly, is = W.instantiateStreaming, inst = W.instantiate;
  if (is) W.instantiateStreaming = function (r, o) {
    t.compileStart = performance.now(); t.streaming = true;
    return is.call(W, r, o).then(function (x) { t.instantiated = performance.now(); return x; });
  };
  var ready;
  Object.defineProperty(window, "__plingReady", { configurable: true,
    get: function () { return ready; },
    set: function (f) { ready = function () { t.ready = performance.now(); return f.apply(this, arguments); }; } });
  W.instantiate = function (b, o) {
    if (!t.compileStart) t.compileStart = performance.now();
    return inst.call(W, b, o).then(function (x) { if (!t.instantiated) t.instantiated = performance.now(); return x; });
  };
})();`

// benchVisitMeasure is the agent arriving on a loaded page: the first
// describe, timed from the call to the response, which includes loading
// wasm_exec.js, fetching, compiling and starting the module.
const benchVisitMeasure = `(async () => {
  const t = window.__plingLoad || {};
  const before = {};
  for (const e of performance.getEntriesByType("resource")) {
    const u = new URL(e.name);
    if (u.pathname.startsWith("/pling/")) before[u.pathname] = e.encodedBodySize;
  }
  const t0 = performance.now();
  const res = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "first-" + Math.random().toString(36).slice(2), method: "describe" });
  const t1 = performance.now();
  const rs = performance.getEntriesByType("resource");
  const wasm = rs.find((e) => /\.wasm(\?|$)/.test(e.name));
  const exec = rs.find((e) => /wasm_exec\.js(\?|$)/.test(e.name));
  return {
    ok: !!res.ok, ms: t1 - t0,
    loaderMs: (t.compileStart || t1) - t0,
    compileMs: t.instantiated && t.compileStart ? t.instantiated - t.compileStart : 0,
    startMs: t.instantiated ? t1 - t.instantiated : 0,
    goStartMs: t.instantiated && t.ready ? t.ready - t.instantiated : 0,
    firstCallMs: t.ready ? t1 - t.ready : 0,
    streaming: !!t.streaming,
    wasmTransfer: wasm ? wasm.transferSize : -1,
    wasmEncoded: wasm ? wasm.encodedBodySize : -1,
    wasmFetchMs: wasm ? wasm.responseEnd - wasm.startTime : -1,
    execTransfer: exec ? exec.transferSize : -1,
    isolated: self.crossOriginIsolated === true,
    capabilities: res.ok ? res.result.capabilities.length : 0,
    before
  };
})()`

// benchHarness defines window.__bench in whatever page it is evaluated in.
// Each function returns raw samples (ms); Go computes the percentiles.
const benchHarness = `window.__bench = window.__bench || (() => {
  const now = () => performance.now();
  const S = "pling.surface/0.1";
  // Request ids stay consumed across reloads and tabs of the origin (the
  // page's replay guard), so each load's ids carry a nonce of their own.
  let seq = 0;
  const nonce = Math.random().toString(36).slice(2) + "-";

  // fresh continues in a new task that no timer started (a message
  // event), as an agent's call arrives. Back-to-back awaits would
  // otherwise nest timers, and the browser clamps a timer nested five
  // deep to 4 ms: that would measure the clamp, not the call.
  const fresh = () => new Promise((ok) => {
    const c = new MessageChannel();
    c.port1.onmessage = () => { c.port1.close(); ok(); };
    c.port2.postMessage(0);
  });

  // resolution is the smallest step performance.now() takes.
  function resolution() {
    let min = Infinity, last = now();
    const end = last + 30;
    for (;;) {
      const t = now();
      if (t > end) break;
      if (t !== last) { if (t - last < min) min = t - last; last = t; }
    }
    return min;
  }

  async function frame() {
    const f = document.createElement("iframe");
    f.src = "/bench/blank.html";
    await new Promise((ok) => { f.onload = ok; document.body.appendChild(f); });
    return f;
  }

  // scripts times, in a fresh iframe each, (a) loading the script from a
  // never-seen URL to its load event (fetch from the server, parse,
  // compile, evaluate) and (b) evaluating its text inline (parse, compile,
  // evaluate; a unique comment defeats V8's compilation cache).
  async function scripts(o) {
    const text = {}, out = {};
    const present = { shim: (w) => !!(w.pling && w.pling.surface), poly: (w) => !!w.document.modelContext };
    for (const k of ["shim", "poly"]) { text[k] = await (await fetch(o[k])).text(); out[k] = { load: [], eval: [] }; }
    for (let i = 0; i < o.warm + o.reps; i++) {
      for (const k of i % 2 ? ["shim", "poly"] : ["poly", "shim"]) {
        let f = await frame();
        const d = f.contentDocument, s = d.createElement("script");
        s.src = o[k] + "?r=" + i + "-" + Math.random().toString(36).slice(2);
        const t0 = now();
        await new Promise((ok, fail) => { s.onload = ok; s.onerror = () => fail(new Error("cannot load " + s.src)); d.head.appendChild(s); });
        const dt = now() - t0;
        if (!present[k](f.contentWindow)) throw new Error(k + ": not installed after loading");
        f.remove();
        f = await frame();
        const e = f.contentDocument.createElement("script");
        e.textContent = text[k] + "\n//# bench " + i + " " + Math.random() + "\n";
        const t1 = now();
        f.contentDocument.head.appendChild(e);
        const de = now() - t1;
        if (!present[k](f.contentWindow)) throw new Error(k + ": not installed after evaluating");
        f.remove();
        if (i >= o.warm) { out[k].load.push(dt); out[k].eval.push(de); }
      }
    }
    return out;
  }

  async function describe(o) {
    await pling.ready;
    const xs = [];
    let first = null;
    for (let i = 0; i < o.warm + o.reps; i++) {
      await fresh();
      const req = { protocol: S, id: "d" + nonce + (seq++), method: "describe" };
      const t0 = now();
      const res = await pling.surface.handle(req);
      const dt = now() - t0;
      if (!res.ok) throw new Error("describe: " + JSON.stringify(res.error));
      if (!first) first = res;
      if (i >= o.warm) xs.push(dt);
    }
    const r = first.result;
    return { samples: xs, capabilities: r.capabilities.length, truncated: !!r.truncated,
      bytes: new TextEncoder().encode(JSON.stringify(first)).length };
  }

  async function getTools(o) {
    const mc = document.modelContext;
    await window.polyReady;
    const xs = [];
    let n = 0, bytes = 0;
    for (let i = 0; i < o.warm + o.reps; i++) {
      await fresh();
      const t0 = now();
      const tools = await mc.getTools();
      const dt = now() - t0;
      if (i === 0) {
        n = tools.length;
        bytes = new TextEncoder().encode(JSON.stringify(tools.map(({ name, title, description, inputSchema }) => ({ name, title, description, inputSchema })))).length;
      }
      if (i >= o.warm) xs.push(dt);
    }
    return { samples: xs, tools: n, bytes };
  }

  // timeout0 is the floor under anything that waits for one
  // setTimeout(0) task, as the polyfill's getTools does.
  async function timeout0(o) {
    const xs = [];
    for (let i = 0; i < o.warm + o.reps; i++) {
      await fresh();
      const t0 = now();
      await new Promise((ok) => setTimeout(ok, 0));
      if (i >= o.warm) xs.push(now() - t0);
    }
    return xs;
  }

  async function invoke(o) {
    await pling.ready;
    const xs = [];
    for (let i = 0; i < o.warm + o.reps; i++) {
      await fresh();
      const req = { protocol: S, id: "i" + nonce + (seq++), method: "invoke", capability: "noop", input: {} };
      const t0 = now();
      const res = await pling.surface.handle(req);
      const dt = now() - t0;
      if (!res.ok || res.result.error) throw new Error("invoke: " + JSON.stringify(res.error || res.result.error));
      if (i >= o.warm) xs.push(dt);
    }
    return xs;
  }

  async function execute(o) {
    const mc = document.modelContext;
    await window.polyReady;
    const tool = (await mc.getTools()).find((t) => t.name === "noop");
    if (!tool) throw new Error("no noop tool");
    if (typeof mc.executeTool !== "function") throw new Error("the polyfill has no executeTool");
    const xs = [];
    for (let i = 0; i < o.warm + o.reps; i++) {
      await fresh();
      const t0 = now();
      await mc.executeTool(tool, "{}");
      if (i >= o.warm) xs.push(now() - t0);
    }
    return xs;
  }

  // declare times declaring n actions on a started module until every
  // declaration has settled.
  async function declare(o) {
    await pling.ready;
    const hs = [];
    const t0 = now();
    for (let i = 0; i < o.n; i++) {
      hs.push(pling.action({ id: "late." + i, title: "Late " + i,
        params: { sku: { type: "string", required: true }, qty: { type: "integer", minimum: 1 } },
        run: () => true }));
    }
    const rs = await Promise.all(hs.map((h) => h.declared));
    const dt = now() - t0;
    if (rs.some((r) => !r.ok)) throw new Error("declare failed");
    return dt;
  }

  // edits times one text edit of a table cell, observers included: the
  // mutation observers run as a microtask before the await continues.
  // kind "textContent" replaces the cell's text node (a childList
  // mutation, as orders.js renders); kind "data" changes the text node in
  // place (characterData, as React, Vue and Svelte update text).
  async function edits(o) {
    const cell = document.querySelector("#rows .row:nth-child(5) [role=cell]:nth-child(2)");
    if (!cell) throw new Error("no row cell");
    cell.textContent = "Edit";
    const text = cell.firstChild;
    const edit = o.kind === "data" ? (s) => { text.data = s; } : (s) => { cell.textContent = s; };
    const xs = [];
    for (let r = 0; r < o.warm + o.reps; r++) {
      const t0 = now();
      for (let k = 0; k < o.batch; k++) { edit("Edit " + r + "." + k); await null; }
      if (r >= o.warm) xs.push((now() - t0) / o.batch);
    }
    return { samples: xs, elements: document.getElementsByTagName("*").length, rows: document.querySelectorAll("#rows .row").length };
  }

  // rowTools builds the tool list a page without folding would declare:
  // one tool per row and applicable action, named by the concrete id.
  async function rowTools() {
    await pling.ready;
    const res = await pling.surface.handle({ protocol: S, id: "rows" + nonce + (seq++), method: "describe", options: { maxRecords: 10000 } });
    if (!res.ok) throw new Error("describe: " + JSON.stringify(res.error));
    const items = res.result.context.records.order.items;
    const applies = { approve: (st) => st === "pending", refund: (st) => st === "approved" || st === "shipped", open: () => true };
    const tools = [];
    for (const c of res.result.capabilities) {
      if (!c.record) { tools.push(c); continue; }
      const base = c.id.split("@")[0];
      for (const it of items) {
        const status = it.label.split(" · ")[2];
        if (applies[base] && !applies[base](status)) continue;
        const t = Object.assign({}, c, { id: c.record.template.replace("{record}", it.id), title: c.title + " " + it.label });
        delete t.record;
        tools.push(t);
      }
    }
    return { tools: tools.length, items: items.length, bytes: new TextEncoder().encode(JSON.stringify(tools)).length };
  }

  async function describeBytes() {
    await pling.ready;
    const res = await pling.surface.handle({ protocol: S, id: "b" + nonce + (seq++), method: "describe" });
    if (!res.ok) throw new Error("describe: " + JSON.stringify(res.error));
    const folds = res.result.capabilities.filter((c) => c.record).map((c) => ({
      id: c.id, total: c.record.total, visible: (c.record.visible || []).length, offscreen: c.record.offscreen || 0 }));
    return { bytes: new TextEncoder().encode(JSON.stringify(res)).length, capabilities: res.result.capabilities.length, folds,
      domRows: document.querySelectorAll("#rows .row").length };
  }

  // floor takes the cold path apart in one page whose HTTP cache holds
  // the module: reading its bytes from the cache, compiling them (the
  // first compile in this renderer), and starting Go on the compiled
  // module until the bridge is ready, first (functions compiled lazily as
  // Go's start runs them) and again (the same module: already compiled).
  async function floor(o) {
    const load = (src) => new Promise((ok, fail) => {
      const s = document.createElement("script");
      s.src = src; s.onload = ok; s.onerror = () => fail(new Error("cannot load " + src));
      document.head.appendChild(s);
    });
    if (!window.Go) await load(o.exec);
    let bytes = await (await fetch(o.wasm)).arrayBuffer();
    const reads = [];
    for (let i = 0; i < o.reads; i++) {
      await fresh();
      const t0 = now();
      bytes = await (await fetch(o.wasm)).arrayBuffer();
      reads.push(now() - t0);
    }
    await fresh();
    let t0 = now();
    const mod = await WebAssembly.compile(bytes);
    const compileMs = now() - t0;
    const starts = [];
    for (let i = 0; i < o.starts; i++) {
      await fresh();
      const go = new Go();
      const ready = new Promise((ok) => { window.__plingReady = ok; });
      t0 = now();
      go.run(await WebAssembly.instantiate(mod, go.importObject));
      await ready;
      starts.push(now() - t0);
    }
    return { reads, compileMs, starts, bytes: bytes.byteLength };
  }

  return { floor, resolution, scripts, describe, getTools, timeout0, invoke, execute, declare, edits, rowTools, describeBytes };
})(), true`

// benchOrdersVariants builds the orders demo page four ways for the
// observer measurement: with the shim (our markup observer), with the
// WebMCP polyfill instead (its form observer), with neither, and with an
// empty observer of the shim's options. The
// page's own script is unchanged; a <base> keeps its relative URLs.
func benchOrdersVariants(demo fs.FS) (map[string][]byte, error) {
	b, err := fs.ReadFile(demo, "orders/index.html")
	if err != nil {
		return nil, err
	}
	page := string(b)
	const tag = `<script src="/pling/pling.js" data-expose="*" defer></script>`
	if !strings.Contains(page, tag) || !strings.Contains(page, "<head>") {
		return nil, errors.New("orders/index.html no longer loads the shim with " + tag)
	}
	page = strings.Replace(page, "<head>", `<head>`+"\n"+`<base href="/orders/">`, 1)
	return map[string][]byte{
		"pling":    []byte(page),
		"polyfill": []byte(strings.Replace(page, tag, `<script src="/bench/webmcp-polyfill.js"></script>`, 1)),
		"none":     []byte(strings.Replace(page, tag, "", 1)),
		// The floor under any observer that must see elements come and
		// go: the shim's observe options with a callback that does nothing.
		"empty": []byte(strings.Replace(page, tag, `<script>new MutationObserver(function () {}).observe(document.documentElement, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-pling-action", "data-pling-state", "data-pling-guide", "data-pling-region", "data-pling-title", "data-pling-record", "data-pling-label", "data-pling-modal"] });</script>`, 1)),
	}, nil
}

// withCustomSection appends a WebAssembly custom section named name to
// module: the same code under different bytes, so that an experiment's
// module shares no cache (V8's in-process module cache is keyed by the
// bytes) with another's.
func withCustomSection(module []byte, name, payload string) ([]byte, error) {
	if len(module) < 8 || string(module[:4]) != "\x00asm" {
		return nil, fmt.Errorf("not a WebAssembly module")
	}
	body := append(uleb(uint64(len(name))), name...)
	body = append(body, payload...)
	out := append([]byte{}, module...)
	out = append(out, 0)
	out = append(out, uleb(uint64(len(body)))...)
	return append(out, body...), nil
}

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// benchDemo is the demo site with the bench's pages and the polyfill
// added under bench/.
func benchDemo(demo fs.FS, polyfill []byte) (fs.FS, error) {
	out := fstest.MapFS{}
	err := fs.WalkDir(demo, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(demo, p)
		if err == nil {
			out[p] = &fstest.MapFile{Data: b, Mode: 0o644}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	add := func(name string, b []byte) { out["bench/"+name] = &fstest.MapFile{Data: b, Mode: 0o644} }
	add("blank.html", []byte(benchBlankPage))
	add("caps.html", []byte(benchCapsPage))
	add("poly.html", []byte(benchPolyfillPage))
	add("visit.html", []byte(benchVisitPage))
	add("webmcp-polyfill.js", polyfill)
	variants, err := benchOrdersVariants(demo)
	if err != nil {
		return nil, err
	}
	for v, b := range variants {
		add("orders-"+v+".html", b)
	}
	return out, nil
}

// compressedSizes are b's sizes raw, gzip (level 9) and brotli at quality
// (the window fitted to the file, as pling serve compresses).
func compressedSizes(b []byte, quality int) bbSizes {
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	return bbSizes{Raw: len(b), Gzip: gz.Len(), Brotli: len(brotliAt(b, quality))}
}

func brotliAt(b []byte, quality int) []byte {
	var out bytes.Buffer
	w := brotli.NewWriterOptions(&out, brotli.WriterOptions{Quality: quality, LGWin: min(max(bits.Len(uint(len(b))), 10), 24)})
	_, _ = w.Write(b)
	_ = w.Close()
	return out.Bytes()
}

// experimentFiles serves the caching experiments' modules, each under its
// own URL and bytes with its own Cache-Control, and otherwise the headers
// pling serve gives the module (COOP/COEP, CORP, a strong ETag, gzip or
// brotli as the browser accepts).
type experimentFiles map[string]*experimentFile

type experimentFile struct {
	cache, etag string
	raw, gz, br []byte
}

func newExperimentFiles(module []byte, es []cachingExperiment) (experimentFiles, error) {
	out := experimentFiles{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, e := range es {
		b, err := withCustomSection(module, "pling.bench", e.name)
		if err != nil {
			return nil, err
		}
		wg.Go(func() {
			sum := sha256.Sum256(b)
			var gz bytes.Buffer
			w, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
			_, _ = w.Write(b)
			_ = w.Close()
			// A fast brotli quality: an experiment compares two visits of
			// the same bytes.
			f := &experimentFile{cache: e.cache, etag: hex.EncodeToString(sum[:12]), raw: b, gz: gz.Bytes(), br: brotliAt(b, 5)}
			mu.Lock()
			out[e.url()] = f
			mu.Unlock()
		})
	}
	wg.Wait()
	return out, nil
}

func (x experimentFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Embedder-Policy", "require-corp")
	h.Set("X-Content-Type-Options", "nosniff")
	f := x[r.URL.Path]
	if f == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		http.NotFound(w, r)
		return
	}
	body, enc := f.raw, ""
	accept := r.Header.Get("Accept-Encoding")
	switch {
	case strings.Contains(accept, "br"):
		body, enc = f.br, "br"
	case strings.Contains(accept, "gzip"):
		body, enc = f.gz, "gzip"
	}
	etag := `"` + f.etag + "-" + enc + `"`
	h.Set("Content-Type", "application/wasm")
	h.Set("Vary", "Accept-Encoding")
	h.Set("ETag", etag)
	h.Set("Cache-Control", f.cache)
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	if enc != "" {
		h.Set("Content-Encoding", enc)
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}
