// The stub (stub.js): calls a page makes before pling.js runs are kept
// and replayed in order when it runs, with handles and a ready that work.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { loadModule } = require("../node.js");
const { createPling, adopt } = require("../pling.js");

const { dist } = require("../testsupport.js");
const stubSource = fs.readFileSync(path.join(__dirname, "..", "stub.js"), "utf8");

// A window with the stub run in it, as an inline script would.
function stubbedWindow() {
  const window = {};
  new Function("window", stubSource)(window);
  return window;
}

// One module per process: the pling the stubbed calls are replayed into.
const real = createPling(() => loadModule(dist), {});
let n = 0;
const req = (method, extra) => Object.assign({ protocol: "pling.surface/0.1", id: "stub" + ++n, method }, extra);

test("calls made on the stub are replayed in order, with working handles and ready", async () => {
  const window = stubbedWindow();
  const stub = window.pling;
  const cart = [];
  stub.configure({ expose: ["cart.*"] });
  stub.state("cart.count", () => cart.length);
  const add = stub.action({ id: "cart.add", title: "Add", params: { sku: { type: "string", required: true } },
    run: ({ sku }) => { cart.push(sku); return cart.length; }, expect: { state: "cart.count", change: "increase" } });
  const gone = stub.action({ id: "cart.gone", title: "Withdrawn before the shim ran", run: () => 1 });
  gone.dispose();
  const hidden = stub.action({ id: "other", title: "Not exposed", run: () => 1 });
  const ready = stub.ready;
  assert.equal(add.code, undefined);

  window.pling = real; // what pling.js does in a page
  adopt(real, stub);
  assert.equal(stub.q.length, 0, "the queue is drained");

  assert.equal(await ready, real, "the stub's ready is the shim's");
  assert.deepEqual(await add.declared, { ok: true });
  assert.deepEqual(await hidden.declared, { ok: true });
  assert.deepEqual(await gone.declared, { ok: true, disposed: true });

  const d = await real.surface.handle(req("describe"));
  assert.equal(d.ok, true);
  assert.deepEqual(d.result.capabilities.map((c) => c.id), ["cart.add"], "configure ran first: only cart.* is exposed");
  const r = await real.surface.handle(req("invoke", { capability: "cart.add", input: { sku: "A1" } }));
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(r.result.value, 1);
  add.dispose();
  await new Promise((f) => setTimeout(f, 0));
  const after = await real.surface.handle(req("describe"));
  assert.deepEqual(after.result.capabilities.map((c) => c.id), [], "the stub handle's dispose reaches the real declaration");
});

test("a stub call the shim refuses is logged and settles its handle", async () => {
  const window = stubbedWindow();
  const stub = window.pling;
  await real.ready; // configure is fixed once the module starts
  const errors = [];
  const orig = console.error;
  console.error = (m) => errors.push(String(m));
  try {
    const h = stub.configure({ expose: ["*"] });
    adopt(real, stub);
    const out = await h.declared;
    assert.equal(out.ok, false);
    assert.match(out.error, /fixed once the module starts/);
  } finally {
    console.error = orig;
  }
  assert.equal(errors.length, 1);
});

test("the stub leaves a real pling alone (pling.js ran first)", () => {
  const window = { pling: real };
  new Function("window", stubSource)(window);
  assert.equal(window.pling, real);
});
