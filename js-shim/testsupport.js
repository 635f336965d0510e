// Test support for the Node tests of the shim (test/): the module each
// test file loads for itself from the built dist/, and the surface
// requests it sends. Not part of the npm package (package.json "files").
"use strict";

const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const vm = require("vm");
const { createPling } = require("./pling.js");
const { loadPling, loadModule } = require("./node.js");

// dist is the directory make wasm fills; PLING_DIST names another.
const dist = process.env.PLING_DIST || path.join(__dirname, "..", "dist");

// load loads the module from dist with opts, which expose every action
// unless they say otherwise.
function load(opts) {
  return loadPling(Object.assign({ dir: dist, expose: ["*"] }, opts));
}

// requests are one test file's surface requests to pling: req(method,
// extra) with the ids prefix1, prefix2, …, invoke(capability, input), and
// lastID(), the id of the latest request.
function requests(pling, prefix) {
  let n = 0;
  const req = (method, extra) => Object.assign({ protocol: "pling.surface/0.1", id: prefix + ++n, method }, extra);
  const invoke = (capability, input) => pling.surface.handle(req("invoke", { capability, input }));
  const lastID = () => prefix + n;
  return { req, invoke, lastID };
}

// The WebMCP mirror's tools built before the module starts (webmcp.js
// preTools) are checked against the module's own pling.tools(): the two
// lists must be equal. loadModule starts one module per
// process, and a pling's configuration is fixed once it starts, so each
// page is a test file of its own (test/webmcp-port*.test.js).
// portCase declares a page (declare(pling, run)) on a pling whose
// configuration is config, lets webmcp.js register its tools before the
// module, checks their names (in registration order, by capability id)
// without the module loaded, then starts the module and requires
// pling.tools() to equal what was registered, with no drift.
async function portCase(t, config, declare, wantNames) {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  let loaded = false;
  const pling = createPling(() => { loaded = true; return loadModule(dist); }, config);
  declare(pling, () => true);
  const registered = new Map();
  const mc = {
    registerTool(tool, opts) {
      registered.set(tool.name, tool);
      opts.signal.addEventListener("abort", () => { if (registered.get(tool.name) === tool) registered.delete(tool.name); });
      return Promise.resolve();
    },
  };
  const document = { modelContext: mc, addEventListener() {} };
  const ctx = vm.createContext({ pling, document, navigator: {}, console, setTimeout, clearTimeout, AbortController, Map, Set, JSON, Promise, Uint8Array, RegExp, Number, Math, URL, crypto: globalThis.crypto });
  ctx.globalThis = ctx;
  vm.runInContext(fs.readFileSync(path.join(__dirname, "webmcp.js"), "utf8"), ctx);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(loaded, false, "the module was loaded before any call");
  const pick = (t) => JSON.parse(JSON.stringify({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema || t.parameters, annotations: t.annotations }));
  const before = [...registered.values()].map(pick);
  assert.deepEqual(before.map((t) => t.name), wantNames);

  const tools = (await pling.tools()).map(pick);
  assert.deepEqual(before, tools);
  await pling._webmcp.sync();
  assert.equal(pling._webmcp.drift, 0);
}


module.exports = { dist, load, requests, portCase };
