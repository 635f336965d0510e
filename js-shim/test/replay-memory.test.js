// replayGuard: "memory" is a page author's explicit choice of ids kept for
// one page load: the page without IndexedDB then serves, and
// an id is still consumed once. Its own process (node --test).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { loadPling } = require("../node.js");

const { dist } = require("../testsupport.js");

test("replayGuard: memory serves a page without IndexedDB, each id once", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  globalThis.document = {};
  t.after(() => { delete globalThis.document; });
  let ran = 0;
  const pling = loadPling({ dir: dist, expose: ["*"], replayGuard: "memory" });
  pling.action({ id: "order.place", title: "Place the order", run: () => ++ran });
  const req = { protocol: "pling.surface/0.1", id: "order-1", method: "invoke", capability: "order.place" };
  const first = await pling.surface.handle(req);
  assert.equal(first.ok, true, JSON.stringify(first));
  const again = await pling.surface.handle(req);
  assert.equal(again.ok, false);
  assert.equal(again.error.code, "REPLAY_DETECTED");
  assert.deepEqual(again.error.details.previous, { completed: true, ok: true });
  assert.equal(ran, 1);
});

test("an unknown replayGuard is refused at init", async () => {
  const { createPling } = require("../pling.js");
  const { loadModule } = require("../node.js");
  // The module's page runtime exists already; init refuses the value
  // before it would refuse a second init.
  const p = createPling(() => loadModule(dist), { expose: ["*"], replayGuard: "disk" });
  await assert.rejects(p.ready, /replayGuard must be "memory" or left out/);
});
