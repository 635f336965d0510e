// The bridge reads the feedback and page hooks together around an invoke
// (one JSON.stringify of both): texts with brackets, commas and quotes are
// split right, and a hook that throws does not hide the other's value. Its
// own file, so its own module and page hooks.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load } = require("../testsupport.js");

const pling = load();

let n = 0;
const invoke = (capability) => pling.surface.handle({ protocol: "pling.surface/0.1", id: "p" + ++n, method: "invoke", capability, input: {} });

let page = { url: "https://a.example/[1],{2}", title: "x\"]," };
let feedback = [{ level: "info", message: "a],[{\"b\":1}," }];
let feedbackThrows = false, pageThrows = false;
pling.configure({
  page: () => { if (pageThrows) throw new Error("no page"); return page; },
  feedback: () => { if (feedbackThrows) throw new Error("no feedback"); return feedback; },
});
let runs = 0;
const message = () => "]]}},\"" + runs;
pling.action({ id: "go", title: "Go", run: () => {
  runs++;
  page = { url: page.url + "/next\"]}", title: "y" };
  feedback = feedback.concat([{ level: "error", message: message() }]);
  return true;
} });

test("feedback and navigation with brackets and quotes in the texts", async () => {
  const from = page.url;
  const res = await invoke("go");
  assert.equal(res.ok, true);
  assert.deepEqual(res.result.observation.feedback, [{ level: "error", message: message() }]);
  assert.deepEqual(res.result.observation.navigation, { from, to: from + "/next\"]}" });
});

test("a feedback hook that throws does not hide the navigation", async () => {
  feedbackThrows = true;
  try {
    const from = page.url;
    const res = await invoke("go");
    assert.equal(res.ok, true);
    assert.equal(res.result.observation.feedback, undefined);
    assert.deepEqual(res.result.observation.navigation, { from, to: from + "/next\"]}" });
  } finally {
    feedbackThrows = false;
  }
});

test("a page hook that throws does not hide the feedback", async () => {
  pageThrows = true;
  try {
    const res = await invoke("go");
    assert.equal(res.ok, true);
    assert.deepEqual(res.result.observation.feedback, [{ level: "error", message: message() }]);
    assert.equal(res.result.observation.navigation, undefined);
  } finally {
    pageThrows = false;
  }
});
