// A wait that ends early leaves no timer behind: after a person approves
// (or finishes a handoff) at once, nothing of the five-minute deadline may
// stay pending, or Node — and a page's event loop — stays busy until it
// fires. A child process runs one approved and one handed-off invoke with
// the default lifetimes and must then exit by itself.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { spawn } = require("child_process");

const { dist } = require("../testsupport.js");

const child = `
const { loadPling } = require(${JSON.stringify(path.join(__dirname, "..", "node.js"))});
const pling = loadPling({ dir: ${JSON.stringify(dist)}, expose: ["*"] });
pling.configure({
  approve: (c) => ({ binding: c.binding, approved: true }),
  handoff: () => "done",
});
pling.action({ id: "pay", title: "Pay", approval: true, run: () => 1 });
pling.action({ id: "sign", title: "Sign", handoff: "Sign the form", run: () => 2 });
(async () => {
  for (const [id, capability] of [["t1", "pay"], ["t2", "sign"]]) {
    const res = await pling.surface.handle({ protocol: "pling.surface/0.1", id, method: "invoke", capability });
    if (!res.ok || res.result.error) { console.log(JSON.stringify(res)); process.exit(3); }
  }
  console.log("answered");
})();
`;

test("no timer outlives an approval or a handoff answered at once", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  const p = spawn(process.execPath, ["-e", child], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  p.stdout.on("data", (b) => { out += b; });
  // The bug keeps the child alive for 300 s; it needs about a second.
  const limit = 60_000;
  const killer = setTimeout(() => p.kill("SIGKILL"), limit);
  const [code, signal] = await new Promise((r) => p.on("exit", (c, s) => r([c, s])));
  clearTimeout(killer);
  assert.match(out, /answered/, "the invokes did not both succeed: " + out);
  assert.equal(signal, null, `the process was still running ${limit / 1000} s after it answered: a timer outlived the wait`);
  assert.equal(code, 0);
});
