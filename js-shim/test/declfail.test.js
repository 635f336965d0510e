// One failing declaration never takes the page down (docs/page-api.md
// §2.10): a records reader that throws or returns rows spelled {ID: …}, a
// state reader that throws, an availability check that throws. Describe
// answers with the rest and names each failure with the page's own text
// (a reader's in the context's feedback, a check's as its action's
// unavailable reason); pling.check() names them.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load, requests } = require("../testsupport.js");

const pling = load();
const { req } = requests(pling, "df");

test("a failing reader or check costs only its own declaration", async () => {
  const run = () => true;
  const hs = [
    pling.action({ id: "refresh", title: "Refresh", run }),
    pling.action({ id: "pay", title: "Pay", record: { kind: "order" }, run }),
    pling.action({ id: "ship", title: "Ship", record: { kind: "parcel" }, run }),
    pling.action({ id: "export", title: "Export", available: () => { throw new TypeError("stock is not defined"); }, run }),
    pling.records("order", () => { throw new Error("orders not loaded yet"); }),
    pling.records("parcel", () => [{ ID: "p1", label: "Parcel 1" }]),
    pling.records("customer", () => [{ id: "c1", label: "Ada" }]),
    pling.state("total", () => { throw new Error("cart is undefined"); }),
    pling.state("count", () => 3),
  ];
  await pling.ready;
  await Promise.all(hs.map((h) => h.declared));

  const d = await pling.surface.handle(req("describe"));
  assert.equal(d.ok, true, JSON.stringify(d.error));
  assert.deepEqual(d.result.capabilities.map((c) => c.id), ["refresh"]);
  assert.deepEqual(Object.keys(d.result.context.records), ["customer"]);
  assert.deepEqual(d.result.context.states, { count: 3, total: null });
  const reasons = Object.fromEntries(d.result.context.unavailable.map((u) => [u.id, u.reason]));
  assert.deepEqual(reasons, {
    "export": "The availability check failed: stock is not defined",
    "pay@order": "Its records (order) could not be read: the records reader failed",
    "ship@parcel": "Its records (parcel) could not be read: the records reader failed",
  });
  assert.deepEqual(d.result.context.feedback, [
    { level: "error", message: 'Declaration mistake: the records reader of "order" failed, so its rows are not listed: orders not loaded yet' },
    { level: "error", message: 'Declaration mistake: the records reader of "parcel" failed, so its rows are not listed: Row: member "ID" is spelled "id"' },
    { level: "error", message: 'Declaration mistake: the reader of the state "total" failed, so it reads null: cart is undefined' },
  ]);

  const lines = await pling.check();
  for (const want of [
    'pling: action "export": its availability check throws (the page says: stock is not defined)',
    'pling: records "order": the reader failed (the page says: orders not loaded yet)',
    'pling: records "parcel": the reader failed (the page says: Row: member "ID" is spelled "id")',
    'pling: state "total": the reader failed (the page says: cart is undefined)',
  ]) {
    assert.ok(lines.some((l) => l.startsWith(want)), `pling.check() has no line starting ${want}:\n${lines.join("\n")}`);
  }

  const tools = await pling.tools();
  assert.deepEqual(tools.map((t) => t.name), ["refresh"]);
  hs.forEach((h) => h.dispose());
});
