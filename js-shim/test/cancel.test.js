// pling.surface.cancel: the call an agent gave up on stops in the page.
// Its own file, so its own module and hooks.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load } = require("../testsupport.js");

// A short approval life: the runtime's timer of a wait outlives the wait
// and keeps Node's event loop alive until it fires.
const pling = load({ approvalTtlMs: 2000 });

const waits = [];
let closed = 0;
pling.configure({
  // A person who never answers; the dialog closes when the runtime stops
  // waiting.
  approve: (challenge, signal) => new Promise(() => { signal.onabort = () => { closed++; }; }),
  waiting: (w) => waits.push(w),
});
let runs = 0;
pling.action({ id: "refund", title: "Refund", approval: true, run: () => { runs++; return "refunded"; } });

const until = async (ok) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), "timed out");
};

test("a cancelled approval answers PERMISSION_DENIED, runs nothing and closes the dialog", async () => {
  const answer = pling.surface.handle({ protocol: "pling.surface/0.1", id: "c1", method: "invoke", capability: "refund" });
  await until(() => waits.length === 1);
  assert.deepEqual(waits[0], { id: "c1", capability: "refund", kind: "approval", timeoutMs: 2000 });
  assert.equal(await pling.surface.cancel("c1"), true);
  const res = await answer;
  assert.equal(res.ok, true);
  assert.equal(res.result.error.code, "PERMISSION_DENIED");
  assert.deepEqual(res.result.error.details, { cancelled: true });
  assert.equal(runs, 0);
  await until(() => closed === 1);
});

test("a cancel that names no call in flight stops nothing", async () => {
  assert.equal(await pling.surface.cancel("c1"), false);
  assert.equal(await pling.surface.cancel("nope", "some-session"), false);
});
