// Page code that settles a thenable more than once: the first settlement
// wins, the rest are ignored, and the module keeps serving. Its own file,
// so its own module: a deadlocked module fails only these tests.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load, requests } = require("../testsupport.js");

const pling = load();

const { req, invoke } = requests(pling, "s");
const tick = (ms) => new Promise((r) => setTimeout(r, ms));
// Resolves to "timeout" when p does not settle in time: a deadlocked
// module never answers.
const within = (p, ms = 5000) => Promise.race([p, tick(ms).then(() => "timeout")]);

// Each then settles more than once, or settles and throws; want is what
// the first settlement gives.
const cases = [
  { name: "ok twice then fail", then: (ok, fail) => { ok(1); ok(2); fail(new Error("x")); }, want: { value: 1 } },
  { name: "fail then ok", then: (ok, fail) => { fail(new Error("first")); ok(2); }, want: { code: "EXECUTION_FAILED", message: /first/ } },
  { name: "fail twice", then: (ok, fail) => { fail(new Error("one")); fail(new Error("two")); }, want: { code: "EXECUTION_FAILED", message: /one/ } },
  { name: "ok then throw", then: (ok) => { ok(3); throw new Error("late"); }, want: { value: 3 } },
  { name: "ok now and again later", then: (ok, fail) => { ok(4); setTimeout(() => { ok(5); fail(new Error("later")); }, 0); }, want: { value: 4 } },
  { name: "ok later twice", then: (ok) => { setTimeout(() => { ok(6); ok(7); }, 0); }, want: { value: 6 } },
];
cases.forEach((c, i) => pling.action({ id: "twice." + i, title: c.name, run: () => ({ then: c.then }) }));
// A fresh input each time, so that the loop guard never answers instead.
pling.action({ id: "plain", title: "Plain", params: { n: { type: "integer" } }, run: () => "still here" });
let fresh = 0;
const plain = () => invoke("plain", { n: ++fresh });
pling.state("twice.state", () => ({ then(ok) { ok(8); ok(9); } }));

for (const [i, c] of cases.entries()) {
  test("a handler's thenable that settles again: " + c.name, async () => {
    const res = await within(invoke("twice." + i, {}));
    assert.notEqual(res, "timeout", "the module stopped answering");
    assert.equal(res.ok, true, JSON.stringify(res));
    if ("value" in c.want) {
      assert.equal(res.result.error, undefined, JSON.stringify(res));
      assert.equal(res.result.value, c.want.value);
    } else {
      assert.equal(res.result.error.code, c.want.code, JSON.stringify(res));
      assert.match(res.result.error.message, c.want.message);
    }
    await tick(10); // the late settlements run
    const after = await within(plain());
    assert.notEqual(after, "timeout", "the module stopped answering after the late settlements");
    assert.equal(after.result.value, "still here", JSON.stringify(after));
  });
}

test("a state reader's thenable that settles twice gives its first value", async () => {
  const res = await within(pling.surface.handle(req("describe")));
  assert.notEqual(res, "timeout", "the module stopped answering");
  assert.equal(res.result.context.states["twice.state"], 8, JSON.stringify(res));
  const after = await within(plain());
  assert.equal(after.result.value, "still here", JSON.stringify(after));
});
