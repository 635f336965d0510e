// The signal a handoff or approval hook gets is a real AbortSignal: a
// hook that looks at it only later — the default UI once ui.js has loaded
// — still sees that the call is over, and never opens a dialog for it.
// Its own file, so its own module and hooks.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load } = require("../testsupport.js");

const pling = load({ approvalTtlMs: 2000 });

let looked = null, loaded = null, opened = 0;
pling.configure({
  // As the default UI does: load something first (ui.js), then show the
  // dialog unless the call is over by then.
  approve: (challenge, signal) => new Promise((resolve) => { loaded = resolve; }).then(() => {
    looked = { isSignal: signal instanceof AbortSignal, aborted: signal.aborted };
    if (signal.aborted) return { binding: challenge.binding, approved: false };
    opened++;
    return new Promise(() => {});
  }),
});
pling.action({ id: "refund", title: "Refund", approval: true, run: () => "refunded" });

const until = async (ok) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), "timed out");
};

test("a cancel that lands while the UI loads is seen when it has loaded: no dialog", async () => {
  const answer = pling.surface.handle({ protocol: "pling.surface/0.1", id: "a1", method: "invoke", capability: "refund" });
  await until(() => loaded !== null);
  assert.equal(await pling.surface.cancel("a1"), true);
  const res = await answer;
  assert.equal(res.result.error.code, "PERMISSION_DENIED");
  loaded(); // ui.js arrives after the call ended
  await until(() => looked !== null);
  assert.deepEqual(looked, { isSignal: true, aborted: true });
  assert.equal(opened, 0);
});
