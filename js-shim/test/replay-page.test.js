// A browser page without IndexedDB cannot keep
// request ids across reloads and tabs, so it refuses every invoke that
// can change something (REPLAY_GUARD_UNAVAILABLE) and says why in the
// console; describe and read actions, which keep their ids in memory,
// still work. Node with a
// document and no IndexedDB stands in for such a page; its own process, as
// node --test gives each file, so the module starts afresh.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { loadPling } = require("../node.js");

const { dist } = require("../testsupport.js");

test("a page without IndexedDB refuses write invokes, and says why", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  assert.equal(globalThis.indexedDB, undefined);
  globalThis.document = {};
  const warnings = [];
  const warn = console.warn;
  console.warn = (m) => warnings.push(String(m));
  t.after(() => { console.warn = warn; delete globalThis.document; });
  let ran = 0;
  const pling = loadPling({ dir: dist, expose: ["*"] });
  let looked = 0;
  pling.action({ id: "order.place", title: "Place the order", run: () => ++ran });
  pling.action({ id: "order.look", title: "Look at the order", risk: "read", run: () => ++looked });
  const res = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "order-1", method: "invoke", capability: "order.place" });
  assert.equal(res.ok, false, JSON.stringify(res));
  assert.equal(res.error.code, "REPLAY_GUARD_UNAVAILABLE");
  assert.equal(ran, 0);
  const desc = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "d-1", method: "describe" });
  assert.equal(desc.ok, true, JSON.stringify(desc));
  const look = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "look-1", method: "invoke", capability: "order.look" });
  assert.equal(look.ok, true, JSON.stringify(look));
  assert.equal(looked, 1);
  assert.match(warnings.join("\n"), /replayGuard: "memory"/);
});
