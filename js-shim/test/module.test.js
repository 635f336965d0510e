// Which build has the conformance entry: the shipped pling.wasm has none
// (no fixture pages, no fake clock), the test module pling-conform.wasm
// (make wasm builds it with -tags plingfixture) has it. Each module runs in
// its own Node process, as loadModule starts one module per process.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

const { dist } = require("../testsupport.js");

// entries loads dist/file in a new Node process and returns the types of
// its bridge's version, handle and fixture.
function entries(file) {
  const script = `
    require(${JSON.stringify(path.join(__dirname, "..", "node.js"))})
      .loadModule(${JSON.stringify(dist)}, ${JSON.stringify(file)})
      .then((b) => { console.log(JSON.stringify({version: typeof b.version, handle: typeof b.handle, fixture: typeof b.fixture})); process.exit(0); },
            (e) => { console.error(String(e)); process.exit(1); });`;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 120000 }));
}

test("the shipped pling.wasm has no fixture entry", (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  assert.deepEqual(entries("pling.wasm"), { version: "string", handle: "function", fixture: "undefined" });
});

test("the test module pling-conform.wasm has the fixture entry", (t) => {
  if (!fs.existsSync(path.join(dist, "pling-conform.wasm"))) return t.skip("pling-conform.wasm is not built; run make wasm");
  assert.deepEqual(entries("pling-conform.wasm"), { version: "string", handle: "function", fixture: "object" });
});
