// A module that failed to load is not cached: the next use of pling loads
// it again, and the declarations made meanwhile are declared then.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { createPling } = require("../pling.js");
const { loadModule } = require("../node.js");

const { dist } = require("../testsupport.js");

test("a failed load is retried on the next use", async () => {
  let calls = 0;
  const pling = createPling(() => {
    calls++;
    if (calls === 1) return Promise.reject(new Error("pling: cannot load pling.wasm (network error)"));
    return loadModule(dist);
  }, { expose: ["*"] });
  const h = pling.action({ id: "ping", title: "Ping", run: () => "pong" });
  await assert.rejects(pling.ready, /network error/);
  const d = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "r1", method: "describe" });
  assert.equal(calls, 2);
  assert.equal(d.ok, true);
  assert.deepEqual(d.result.capabilities.map((c) => c.id), ["ping"]);
  assert.equal((await h.declared).ok, true);
});
