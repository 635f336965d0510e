// Node side of `pling-bench hosts` (e2e/cmd/pling-bench): times the module's fixture entry in this
// process (no pipe in the measurement) and prints one JSON object.
//   node js-shim/bench.js DIST PAGE_JSON_FILE ITERATIONS
"use strict";

const fs = require("fs");
const { performance } = require("perf_hooks");
const { loadModule } = require("./node.js");

const [dist, pageFile, itersArg] = process.argv.slice(2);
const iters = Number(itersArg || 2000);
const page = fs.readFileSync(pageFile, "utf8");

const t0 = performance.now();
loadModule(dist, "pling-conform.wasm").then((bridge) => {
  const fx = bridge.fixture;
  const id = fx.load(page);
  const first = fx.handle(id, JSON.stringify({ protocol: "pling.surface/0.1", id: "cold", method: "describe" }));
  const coldMs = performance.now() - t0;
  if (!first.includes('"ok":true')) throw new Error("first describe failed: " + first.slice(0, 200));
  let n = 0;
  const time = (method, extra) => {
    // warm up, then measure
    for (let i = 0; i < 50; i++) fx.handle(id, JSON.stringify(Object.assign({ protocol: "pling.surface/0.1", id: "w" + n++, method }, extra)));
    const reqs = [];
    for (let i = 0; i < iters; i++) reqs.push(JSON.stringify(Object.assign({ protocol: "pling.surface/0.1", id: "b" + n++, method }, extra)));
    const s = performance.now();
    for (const r of reqs) fx.handle(id, r);
    return ((performance.now() - s) * 1000) / iters; // µs per call
  };
  const describeUs = time("describe", {});
  const invokeUs = time("invoke", { capability: "noop", input: {} });
  process.stdout.write(JSON.stringify({ coldStartMs: coldMs, describeUs, invokeUs }) + "\n");
  process.exit(0);
}).catch((e) => {
  process.stderr.write(String(e && e.stack || e) + "\n");
  process.exit(1);
});
