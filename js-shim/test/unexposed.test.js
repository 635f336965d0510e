// A declared action the site allowlist does not expose: a console warning
// once per id, and a line in describe's feedback.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load } = require("../testsupport.js");

const pling = load({ expose: ["cart.*"] });

test("an unexposed action warns once per id and is named in describe's feedback", async () => {
  const warnings = [];
  const orig = console.warn;
  console.warn = (m) => warnings.push(String(m));
  let hs;
  try {
    const run = () => 1;
    hs = [
      pling.action({ id: "cart.add", title: "Add", run }),
      pling.action({ id: "checkout", title: "Checkout", run }),
      pling.action({ id: "checkout", title: "Checkout", run }),
    ];
    await pling.ready;
    await Promise.all(hs.map((h) => h.declared));
  } finally {
    console.warn = orig;
  }
  assert.deepEqual(warnings, [
    'pling: action "checkout" is declared but not exposed: the site allowlist (data-expose, configure({expose})) is "cart.*"; agents cannot see it',
  ]);
  const d = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "u1", method: "describe" });
  assert.equal(d.ok, true);
  assert.deepEqual(d.result.capabilities.map((c) => c.id), ["cart.add"]);
  assert.deepEqual(d.result.context.feedback, [{ level: "warning",
    message: '1 declared action(s) are not exposed by the site allowlist (data-expose / expose: "cart.*"); the page\'s console names them' }]);
});
