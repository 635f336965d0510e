// Pling in Node: the same pling object as in a page, without a DOM, running
// the same pling.wasm through Go's wasm_exec.js.
//
//   const { loadPling } = require("./node.js");
//   const pling = loadPling({ dir: "dist", expose: ["*"] });
//   pling.action({ id: "cart.add", title: "Add to cart", run: () => 1 });
//   const res = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "r1", method: "describe" });
"use strict";

const fs = require("fs");
const path = require("path");
const { createPling } = require("./pling.js");

// loadModule starts pling.wasm (or file, such as the test module
// pling-conform.wasm) once per process and resolves to its bridge.
let started = null;
function loadModule(dir, file = "pling.wasm") {
  if (started) return started;
  globalThis.require ??= require;
  globalThis.fs ??= fs;
  globalThis.path ??= path;
  globalThis.TextEncoder ??= require("util").TextEncoder;
  globalThis.TextDecoder ??= require("util").TextDecoder;
  globalThis.performance ??= require("perf_hooks").performance;
  globalThis.crypto ??= require("crypto").webcrypto;
  require(path.resolve(dir, "wasm_exec.js"));
  const go = new globalThis.Go();
  started = new Promise((resolve, reject) => {
    globalThis.__plingReady = resolve;
    WebAssembly.instantiate(fs.readFileSync(path.resolve(dir, file)), go.importObject)
      .then((r) => {
        go.run(r.instance).then(() => reject(new Error("pling: the module exited")));
      })
      .catch(reject);
  });
  return started;
}

// defaultDir is where the module is when no dir is given: dist/ beside
// this file in the npm package, ../dist in the repository.
function defaultDir() {
  const packaged = path.join(__dirname, "dist");
  return fs.existsSync(path.join(packaged, "pling.wasm")) ? packaged : path.join(__dirname, "..", "dist");
}

// loadPling returns a pling object backed by the module in opts.dir (the
// directory with pling.wasm and wasm_exec.js; default: defaultDir()). Other
// options are the configuration (expose, origin, keys, rateLimit, …).
function loadPling(opts = {}) {
  const dir = opts.dir || defaultDir();
  const config = Object.assign({}, opts);
  delete config.dir;
  return createPling(() => loadModule(dir), config);
}

module.exports = { loadPling, loadModule };
