// The default identity of an action is written once, in pling.js: a
// wrapper that declares through functions of its own (react.mjs) passes
// pling._identity(def) of the definition it wraps, and the declaration
// is then the same as one of the definition itself.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load } = require("../testsupport.js");

const pling = load();

test("a wrapper's declaration with _identity of the wrapped definition is the same declaration", async () => {
  // Two runs whose source differs (the identity is the functions' source).
  const runs = { a: () => "a", b: () => "b" };
  const def = (k) => ({ id: "wrapped", title: "Wrapped", run: runs[k], expect: { state: "s", change: "any", predicate: () => true } });
  const wrap = (d) => Object.assign({}, d, { run: (input, call) => d.run(input, call), expect: Object.assign({}, d.expect, { predicate: (b, a) => d.expect.predicate(b, a) }), identity: pling._identity(d) });
  assert.equal(typeof pling._identity, "function");
  assert.equal(Object.keys(pling).includes("_identity"), false, "not enumerable: not part of the page API");
  const direct = pling.action(def("a"));
  const same = pling.action(wrap(def("a")));
  const other = pling.action(wrap(def("b")));
  await pling.ready;
  assert.deepEqual(await direct.declared, { ok: true });
  assert.deepEqual(await same.declared, { ok: true });
  const o = await other.declared;
  assert.equal(o.ok, false);
  assert.equal(o.code, "DUPLICATE_ACTION_ID");
  assert.notEqual(pling._identity(def("a")), pling._identity(def("b")));
});
