// The bridge's own reading of page code in Node: the page and feedback
// hooks read around an invoke, the arguments a handler gets and the values
// it returns. Its own file, so its own module and page hooks.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load, requests } = require("../testsupport.js");

const pling = load();

const { req, invoke, lastID } = requests(pling, "h");

let page = { url: "https://shop.example/cart", title: "Cart" };
let feedback = [{ level: "info", message: "Welcome" }];
const pageThis = [], pageArgs = [];
pling.configure({
  page: function () { pageThis.push(this); pageArgs.push(arguments.length); return page; },
  feedback: () => feedback,
});

const seen = [];
pling.action({ id: "checkout", title: "Check out", run: () => {
  feedback = feedback.concat([{ level: "success", message: "Order placed" }]);
  page = { url: "https://shop.example/thanks", title: "Thanks" };
  return "ok";
} });
pling.action({ id: "same", title: "Changes nothing", run: () => true });
pling.action({ id: "args", title: "Shows its arguments", params: { q: { type: "string" } },
  run: function (input, call) { seen.push({ input, call }); input.mutated = true; return null; } });
const returns = { str: "a \"quoted\" \u2028 line", lone: "x\ud800y", num: 1.5, obj: { a: [1, "b", null] }, none: undefined };
for (const k of Object.keys(returns)) pling.action({ id: "ret." + k, title: "Returns " + k, run: () => returns[k] });

test("feedback and navigation are observed around the call", async () => {
  const res = await invoke("checkout");
  assert.equal(res.ok, true);
  assert.equal(res.result.value, "ok");
  assert.deepEqual(res.result.observation.feedback, [{ level: "success", message: "Order placed" }]);
  assert.deepEqual(res.result.observation.navigation, { from: "https://shop.example/cart", to: "https://shop.example/thanks" });
});

test("reads that did not change give the same observation, and a later change is seen", async () => {
  for (let i = 0; i < 3; i++) {
    const res = await invoke("same");
    assert.equal(res.result.observation.feedback, undefined);
    assert.equal(res.result.observation.navigation, undefined);
  }
  const d = await pling.surface.handle(req("describe"));
  assert.deepEqual(d.result.context.page, { url: "https://shop.example/thanks", title: "Thanks" });
  page = { url: "https://shop.example/thanks?x=\"1\"", title: "Tab \t \"Thanks\" \u00e9 \u{1F600}" };
  feedback = [{ level: "warning", message: "Line\nbreak \\ \"q\"" }];
  const d2 = await pling.surface.handle(req("describe"));
  assert.deepEqual(d2.result.context.page, page);
  assert.deepEqual(d2.result.context.feedback, feedback);
  page = { title: "Only a title", extra: 1 };
  const d3 = await pling.surface.handle(req("describe"));
  assert.deepEqual(d3.result.context.page, { title: "Only a title" });
});

test("the page hook is called as a plain function", () => {
  assert.ok(pageThis.length > 0);
  assert.ok(pageThis.every((t) => t === undefined));
  assert.ok(pageArgs.every((a) => a <= 1));
});

test("a handler gets a fresh input and the call", async () => {
  await invoke("args", { q: "<&> \"x\"" });
  const id = lastID();
  await invoke("args", {});
  assert.deepEqual(seen[0].input, { q: "<&> \"x\"", mutated: true });
  assert.deepEqual(seen[0].call, { action: "args", capability: "args", requestId: id, step: 0 });
  assert.deepEqual(Object.keys(seen[0].call), ["action", "capability", "requestId", "step"]);
  assert.deepEqual(seen[1].input, { mutated: true });
  assert.notEqual(seen[0].input, seen[1].input);
});

test("values a handler returns come back as JSON would carry them", async () => {
  const want = { str: returns.str, lone: "x\ufffdy", num: 1.5, obj: returns.obj, none: undefined };
  for (const k of Object.keys(returns)) {
    const res = await invoke("ret." + k);
    assert.equal(res.ok, true, k);
    assert.deepEqual(res.result.value, want[k], k);
  }
});
