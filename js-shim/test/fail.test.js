// A handler's business failure (docs/page-api.md §2.9): pling.fail
// returned, a pling.Failure thrown or rejected, is a business result with
// the page's code and message, never EXECUTION_FAILED "JavaScript error";
// a handler that never settles is answered at its deadline.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load, requests } = require("../testsupport.js");

const pling = load();

const { invoke } = requests(pling, "f");

const cases = [
  { name: "returned", run: () => pling.fail("INVALID_PARAMS", "Board name is too short", { path: "/name" }),
    want: { code: "INVALID_PARAMS", message: "Board name is too short", details: { violations: [{ path: "/name", reason: "Board name is too short" }] } } },
  { name: "thrown", run: () => { throw new pling.Failure("PERMISSION_DENIED", "Only admins may close boards"); },
    want: { code: "PERMISSION_DENIED", message: "Only admins may close boards" } },
  { name: "rejected", run: async () => { throw pling.fail("ACTION_UNAVAILABLE", "The ticket is already closed"); },
    want: { code: "ACTION_UNAVAILABLE", message: "The ticket is already closed" } },
  { name: "a step's", steps: [{ run: () => pling.fail("INVALID_PARAMS", "No slot at 9:00", { path: "slot" }) }],
    wantCode: "STEP_FAILED" },
];
cases.forEach((c, i) => pling.action({ id: "fail." + i, title: c.name, run: c.run, steps: c.steps, params: { name: { type: "string" } } }));
pling.action({ id: "hang", title: "Hang", timeoutMs: 50, run: () => new Promise(() => {}) });

for (const [i, c] of cases.entries()) {
  test("pling.fail " + c.name + " is a business result", async () => {
    const res = await invoke("fail." + i, { name: "x" + i });
    assert.equal(res.ok, true, JSON.stringify(res));
    if (c.wantCode) {
      assert.equal(res.result.error.code, c.wantCode, JSON.stringify(res));
      return;
    }
    const { code, message, details } = res.result.error;
    assert.deepEqual({ code, message, ...(details ? { details } : {}) }, c.want);
  });
}

test("a handler that never settles is answered at its timeoutMs", async () => {
  const res = await invoke("hang", {});
  assert.equal(res.ok, true, JSON.stringify(res));
  assert.equal(res.result.error.code, "EXECUTION_FAILED");
  assert.match(res.result.error.message, /did not finish within 50 ms/);
  assert.deepEqual(res.result.error.details, { timeoutMs: 50, finished: false });
});

test("a thrown plain Error stays EXECUTION_FAILED", async () => {
  pling.action({ id: "boom", title: "Boom", run: () => { throw new Error("boom"); } });
  const res = await invoke("boom", {});
  assert.equal(res.result.error.code, "EXECUTION_FAILED");
});
