// The WebMCP mirror's tools built before the module starts (webmcp.js
// preTools) against the module's own pling.tools(), on one page of many
// declaration shapes: the two lists must be equal (issue 24 item 2). Its
// own file: loadModule starts one module per process, and a pling's
// configuration is fixed once it starts.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const vm = require("vm");
const { createPling } = require("../pling.js");
const { loadModule } = require("../node.js");

const { dist } = require("../testsupport.js");

test("webmcp: the tools registered before the module equal pling.tools() once it runs", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  let loaded = false;
  const pling = createPling(() => { loaded = true; return loadModule(dist); }, { expose: ["shop.*", "misc.*"], anonymous: ["shop.*", "misc.ok*"], origin: "https://shop.test" });
  const run = () => true;
  pling.state("n", () => 1);
  pling.guide("cart", "The cart");
  pling.action({ id: "shop.search", title: "Search products", description: "By name or SKU. Shows prices.", risk: "read", run,
    params: { q: { type: "string", description: "Words", minLength: 1, maxLength: 80, pattern: "^[^<>]*$" }, page: { type: "integer", minimum: 1, maximum: 50, default: 1 } } });
  pling.action({ id: "shop.cart.add", title: "Add to cart", run,
    params: { sku: { type: "string", required: true }, qty: { type: "number", required: true, minimum: 0.5 }, gift: { type: "boolean" }, size: { type: "string", enum: ["S", "M", "L"] } } });
  pling.action({ id: "shop.order.cancel", title: "Cancel the order", risk: "destructive", run });
  pling.action({ id: "shop.pay", title: "Pay — €, 支付", description: "Charges the card on file", approval: true, run });
  pling.action({ id: "shop.hidden", title: "Hidden", available: () => "It is not visible on the page", run });
  pling.action({ id: "shop.off", title: "Off", available: false, run });
  pling.action({ id: "shop.on", title: "On", available: () => 1, run });
  pling.action({ id: "shop.z-last_1", title: "Last", run });
  pling.action({ id: "misc.ok", title: "Misc ok", run });
  pling.action({ id: "misc.nope", title: "Not for anonymous callers", run });
  pling.action({ id: "admin.wipe", title: "Not exposed", risk: "destructive", run });

  const registered = new Map();
  let drift = null;
  const mc = {
    registerTool(tool, opts) {
      registered.set(tool.name, tool);
      opts.signal.addEventListener("abort", () => { if (registered.get(tool.name) === tool) registered.delete(tool.name); });
      return Promise.resolve();
    },
  };
  const document = { modelContext: mc, addEventListener() {} };
  const ctx = vm.createContext({ pling, document, navigator: {}, console, setTimeout, clearTimeout, AbortController, Map, Set, JSON, Promise, Uint8Array, RegExp, crypto: globalThis.crypto });
  ctx.globalThis = ctx;
  vm.runInContext(fs.readFileSync(path.join(__dirname, "..", "webmcp.js"), "utf8"), ctx);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(loaded, false, "the module was loaded before any call");
  const pick = (t) => JSON.parse(JSON.stringify({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema || t.parameters, annotations: t.annotations }));
  const before = [...registered.values()].map(pick);
  assert.deepEqual(before.map((t) => t.name), ["misc_ok", "shop_cart_add", "shop_on", "shop_order_cancel", "shop_pay", "shop_search", "shop_z-last_1"]);

  const tools = (await pling.tools()).map(pick);
  assert.deepEqual(before, tools);
  await pling._webmcp.sync();
  drift = pling._webmcp.drift;
  assert.equal(drift, 0);
});
