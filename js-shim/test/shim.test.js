// The shim in Node with scripted JS handlers, driven through
// pling.surface.handle: the same module the browser loads.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load, requests } = require("../testsupport.js");

const pling = load();

const { req, invoke, lastID } = requests(pling, "js");

// Declared before the module is loaded: queued, then flushed.
let cart = [];
pling.state("cart.count", () => cart.length);
const add = pling.action({
  id: "cart.add",
  title: "Add to cart",
  params: { sku: { type: "string", required: true }, qty: { type: "integer", minimum: 1 } },
  available: () => cart.length < 3 || "Cart is full",
  run: async ({ sku, qty }) => {
    await new Promise((r) => setTimeout(r, 5));
    cart.push({ sku, qty: qty ?? 1 });
    return { added: sku };
  },
  expect: { state: "cart.count", change: "increase" },
});
pling.action({ id: "boom", title: "Throws", run: () => { throw new Error("card declined"); } });
pling.action({ id: "reject", title: "Rejects", run: () => Promise.reject(new Error("server said no")) });
const orders = [
  { id: "ord_1", label: "#1001", visible: true },
  { id: "ord_2", label: "#1002", visible: false },
];
pling.records("order", () => orders);
const approved = [];
pling.action({ id: "approve", title: "Approve order", record: { kind: "order" }, run: ({ record, note }) => { approved.push(record); return { record, note }; },
  params: { note: { type: "string" } } });

test("declarations made before the module loads are queued and flushed", async () => {
  await pling.ready;
  assert.deepEqual(await add.declared, { ok: true });
});

test("describe lists the declared capabilities, folded row actions once", async () => {
  const res = await pling.surface.handle(req("describe"));
  assert.equal(res.ok, true);
  const ids = res.result.capabilities.map((c) => c.id);
  assert.deepEqual(ids, ["approve@order", "boom", "cart.add", "reject"]);
  const fold = res.result.capabilities[0].record;
  assert.equal(fold.total, 2);
  assert.deepEqual(fold.visible, ["ord_1"]);
  assert.equal(fold.offscreen, 1);
  assert.equal(res.result.context.states["cart.count"], 0);
});

test("invoke runs an async JS handler and observes the expectation", async () => {
  const res = await invoke("cart.add", { sku: "A1", qty: 2 });
  assert.equal(res.ok, true, JSON.stringify(res));
  assert.equal(res.result.error, undefined, JSON.stringify(res));
  assert.deepEqual(res.result.value, { added: "A1" });
  assert.equal(res.result.evidence.expectations[0].met, true);
  assert.deepEqual(res.result.observation.states["cart.count"], { before: 0, after: 1 });
  assert.deepEqual(cart, [{ sku: "A1", qty: 2 }]);
});

test("params are validated before page code runs", async () => {
  const res = await invoke("cart.add", { qty: 0 });
  assert.equal(res.result.error.code, "INVALID_PARAMS");
  assert.equal(cart.length, 1);
});

test("a JS exception in a handler is EXECUTION_FAILED and the module keeps serving", async () => {
  const res = await invoke("boom", {});
  assert.equal(res.ok, true);
  assert.equal(res.result.error.code, "EXECUTION_FAILED");
  assert.match(res.result.error.message, /card declined/);
  const rej = await invoke("reject", {});
  assert.equal(rej.result.error.code, "EXECUTION_FAILED");
  assert.match(rej.result.error.message, /server said no/);
  const again = await invoke("cart.add", { sku: "B2" });
  assert.equal(again.result.error, undefined, JSON.stringify(again));
});

test("a folded action gets its record back in the handler input", async () => {
  const res = await invoke("approve@order", { record: "ord_1", note: "ok" });
  assert.deepEqual(res.result.value, { record: "ord_1", note: "ok" });
  assert.deepEqual(approved, ["ord_1"]);
  const off = await invoke("approve@order", { record: "ord_2" });
  assert.equal(off.result.error.code, "ACTION_UNAVAILABLE");
  const missing = await invoke("approve@order", {});
  assert.equal(missing.result.error.code, "INVALID_PARAMS");
});

test("availability from JS: a reason string makes the action unavailable", async () => {
  await invoke("cart.add", { sku: "C3" });
  const res = await invoke("cart.add", { sku: "D4" });
  assert.equal(res.result.error.code, "ACTION_UNAVAILABLE");
  assert.equal(res.result.error.message, "Cart is full");
  const d = await pling.surface.handle(req("describe"));
  // With its input schema, title and risk, so an agent can offer it
  // before it can run.
  assert.deepEqual(d.result.context.unavailable, [{ id: "cart.add", reason: "Cart is full", inputSchema: {
    type: "object", additionalProperties: false, required: ["sku"],
    properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 } },
  }, title: "Add to cart", risk: "write" }]);
});

test("a different declaration under one id is DUPLICATE_ACTION_ID; the same one is de-duplicated", async () => {
  const same = pling.action({ id: "boom", title: "Throws", run: () => { throw new Error("card declined"); } });
  assert.deepEqual(await same.declared, { ok: true });
  const other = pling.action({ id: "boom", title: "Something else", run: () => 1 });
  const out = await other.declared;
  assert.equal(out.code, "DUPLICATE_ACTION_ID");
  const res = await invoke("boom", {});
  assert.equal(res.result.error.code, "DUPLICATE_ACTION_ID");
  other.dispose();
  const back = await invoke("boom", {});
  assert.equal(back.result.error.code, "EXECUTION_FAILED");
  same.dispose();
});

test("requests as JSON text take the same path, and protocol errors are ok:false", async () => {
  const res = await pling.surface.handle('{"protocol":"pling.surface/0.1","id":"t1","method":"nope"}');
  assert.equal(res.ok, false);
  assert.equal(res.error.code, "METHOD_NOT_SUPPORTED");
  const bad = await pling.surface.handle("{not json");
  assert.equal(bad.ok, false);
  assert.equal(bad.id, null);
});

test("model tools: names models accept, and INVALID_ARGS for arguments that are not an object", async () => {
  const tools = await pling.tools();
  for (const t of tools) assert.match(t.name, /^[A-Za-z0-9_-]{1,64}$/);
  const fold = tools.find((t) => t.capability === "approve@order");
  assert.deepEqual(fold.parameters.required, ["record"]);
  const res = await pling.callTool("boom", "[1, 2]");
  assert.equal(res.ok, true);
  assert.equal(res.result.error.code, "INVALID_ARGS");
});

test("configure after the module started is refused", () => {
  assert.throws(() => pling.configure({ expose: [] }), /fixed/);
});

test("a Go panic in the bridge is INTERNAL_ERROR and the module keeps serving", async () => {
  globalThis.__plingTestPanic = true;
  try {
    const res = await pling.surface.handle(req("describe"));
    assert.equal(res.ok, false);
    assert.equal(res.error.code, "INTERNAL_ERROR");
    assert.equal(res.id, lastID());
  } finally {
    globalThis.__plingTestPanic = false;
  }
  const after = await pling.surface.handle(req("describe"));
  assert.equal(after.ok, true);
});
