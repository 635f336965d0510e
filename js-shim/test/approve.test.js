// A page's own approver (pling.configure({approve})) gets the challenge
// with the bound input rendered for a person by the module: the record's
// label and every value, redacted, escaped and bounded, as every host and
// the default dialog show it.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load, requests } = require("../testsupport.js");

const pling = load();

const shown = [];
pling.configure({ approve: (c) => { shown.push(c); return { binding: c.binding, approved: true }; } });
pling.records("order", () => [{ id: "ord_1", label: "#1001 · Ada Jensen", visible: true }]);
pling.action({ id: "refund", title: "Refund order", risk: "destructive", approval: true, record: { kind: "order" },
  params: { amount: { type: "number", description: "Amount in EUR" }, to: { type: "string" }, password: { type: "string" } },
  run: () => true });

const { invoke } = requests(pling, "ap");

test("the approve hook gets the record's label and every input value, rendered for a person, in declared order", async () => {
  const res = await invoke("refund@order", { record: "ord_1", amount: 500000, to: "mallory\u202E", password: "hunter2" });
  assert.equal(res.ok, true);
  assert.equal(res.result.evidence.approval, "approved");
  assert.equal(shown.length, 1);
  const c = shown[0];
  assert.deepEqual(c.record, { kind: "order", id: "ord_1", label: "#1001 · Ada Jensen" });
  assert.deepEqual(c.input, [
    { name: "amount", title: "Amount in EUR", value: "500000" },
    { name: "to", title: "to", value: "mallory\\u{202E}", escaped: true },
    { name: "password", title: "password", value: "[REDACTED]", redacted: true },
  ]);
  assert.ok(!JSON.stringify(c).includes("hunter2"), "the challenge carries the password");
});
