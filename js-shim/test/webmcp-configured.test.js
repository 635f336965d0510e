// A page a script configured before the module: the WebMCP mirror does
// not list tools from that configuration; the module, which holds a
// configure to the script tag, lists them.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const vm = require("vm");
const { createPling } = require("../pling.js");
const { loadModule } = require("../node.js");
const { dist } = require("../testsupport.js");

test("webmcp: a configured page's tools come from the module, not from the configuration", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  // The module waits until the test has looked at what the mirror
  // registered before it: a module that loads fast would list the tools
  // itself, as it should, and hide what the mirror did.
  let loaded = false, release;
  const gate = new Promise((r) => { release = r; });
  const pling = createPling(() => { loaded = true; return gate.then(() => loadModule(dist)); }, { expose: ["shop.*"] });
  pling.configure({ expose: ["*"] });
  pling.action({ id: "shop.add", title: "Add", run: () => true });
  const registered = [];
  const mc = { registerTool(tool) { registered.push(tool.name); return Promise.resolve(); } };
  const document = { modelContext: mc, addEventListener() {} };
  const ctx = vm.createContext({ pling, document, navigator: {}, console, setTimeout, clearTimeout, AbortController, Map, Set, JSON, Promise, Uint8Array, RegExp, Number, Math, URL, crypto: globalThis.crypto });
  ctx.globalThis = ctx;
  vm.runInContext(fs.readFileSync(path.join(__dirname, "..", "webmcp.js"), "utf8"), ctx);
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(registered, [], "tools were listed from the configuration before the module ran");
  release();
  await pling.ready;
  await pling._webmcp.sync();
  assert.equal(loaded, true);
  assert.deepEqual(registered, ["shop_add"]);
});
