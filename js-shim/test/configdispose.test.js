// configure's dispose withdraws the configuration while the module has not
// started; once it has, the configuration is fixed.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { createPling } = require("../pling.js");
const { loadModule } = require("../node.js");

const { dist } = require("../testsupport.js");

test("dispose before the module starts puts the configuration back", async () => {
  let inits = [];
  const pling = createPling(() => loadModule(dist).then((b) => ({
    init: (cfg, hooks) => { inits.push({ cfg: JSON.parse(cfg), hooks: Object.keys(hooks).sort() }); return b.init(cfg, hooks); },
    get handle() { return b.handle; },
    cancel: b.cancel, tools: b.tools, callTool: b.callTool, dispose: b.dispose, declare: b.declare,
  })), { expose: ["a"] }, { page: () => ({}) });
  const kept = pling.configure({ origin: "https://kept.example" });
  const gone = pling.configure({ expose: ["*"], page: null, waiting: () => {} });
  assert.equal(pling.configured, true);
  gone.dispose();
  gone.dispose(); // twice is once
  assert.equal(pling.configured, true, "the other configure still holds");
  kept.dispose();
  assert.equal(pling.configured, false);
  const again = pling.configure({ origin: "https://final.example" });
  await pling.ready.catch(() => {});
  assert.equal(inits.length, 1);
  assert.deepEqual(inits[0].cfg.expose, ["a"], "expose back to the default");
  assert.equal(inits[0].cfg.origin, "https://final.example");
  assert.deepEqual(inits[0].hooks, ["page"], "the page hook back, the waiting hook gone");
  again.dispose(); // after the start: the configuration is fixed
  assert.equal(pling.configured, true);
});
