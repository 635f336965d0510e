// pling.configure's data members are read by the names pling.d.ts
// declares (Page.Config): rateLimit as the demo and bench spell it takes
// effect, and a member spelled in another case fails the start with "bad
// configuration" instead of being ignored. One module per process, so each
// page runs in a child process.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { execFile } = require("child_process");

const { dist } = require("../testsupport.js");

function page(config) {
  const src = `
const { loadPling } = require(${JSON.stringify(path.join(__dirname, "..", "node.js"))});
const pling = loadPling({ dir: ${JSON.stringify(dist)}, expose: ["*"] });
pling.configure(${JSON.stringify(config)});
pling.action({ id: "ping", title: "Ping", run: () => 1 });
(async () => {
  const codes = [];
  for (const id of ["c1", "c2"]) {
    const res = await pling.surface.handle({ protocol: "pling.surface/0.1", id, method: "invoke", capability: "ping" });
    codes.push(res.ok ? "ok" : res.error.code);
  }
  console.log(JSON.stringify({ codes }));
})().catch((e) => console.log(JSON.stringify({ error: String(e.message) })));
`;
  return new Promise((ok, fail) => {
    execFile(process.execPath, ["-e", src], { timeout: 60_000 }, (err, stdout) => (err ? fail(err) : ok(JSON.parse(stdout))));
  });
}

test("rateLimit, spelled as documented, limits invokes", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  const got = await page({ rateLimit: { describe: { burst: 10, perSecond: 1 }, invoke: { burst: 1, perSecond: 0.001 } } });
  assert.deepEqual(got, { codes: ["ok", "RATE_LIMITED"] });
});

test("a member spelled in another case is refused, not ignored", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  for (const config of [{ RateLimit: { invoke: { burst: 1, perSecond: 0.001 } } }, { rateLimit: { Invoke: { burst: 1 } } }, { ExpectTimeoutMs: 10 }]) {
    const got = await page(config);
    assert.match(got.error || "", /bad configuration: .*member "(RateLimit|Invoke|ExpectTimeoutMs)" is spelled/, JSON.stringify(config));
  }
});
