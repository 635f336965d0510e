// A page configured with authority (docs/authority.md "Pages that follow
// the authority"): the configuration is checked at start, and while the
// authority cannot be reached a delegated session is refused (fail closed)
// and callers without a session are served as before. One module per
// process, so each page runs in a child process (which exits itself: the
// follower's retries would keep it alive).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const { execFile } = require("child_process");

const { dist } = require("../testsupport.js");

function page(config, session) {
  const src = `
const { loadPling } = require(${JSON.stringify(path.join(__dirname, "..", "node.js"))});
const pling = loadPling({ dir: ${JSON.stringify(dist)}, expose: ["*"] });
pling.configure(${JSON.stringify(config)});
pling.action({ id: "ping", title: "Ping", risk: "write", run: () => 1 });
(async () => {
  const codes = [];
  for (const [id, session] of [["c1", undefined], ["c2", ${JSON.stringify(session)}]]) {
    const req = { protocol: "pling.surface/0.1", id, method: "invoke", capability: "ping" };
    if (session) req.session = session;
    const res = await pling.surface.handle(req);
    codes.push(res.ok ? "ok" : res.error.code);
  }
  console.log(JSON.stringify({ codes }));
})().catch((e) => console.log(JSON.stringify({ error: String(e.message) }))).finally(() => process.exit(0));
`;
  return new Promise((ok, fail) => {
    execFile(process.execPath, ["-e", src], { timeout: 60_000 }, (err, stdout) => (err ? fail(err) : ok(JSON.parse(stdout))));
  });
}

// A pl1 token of the right form signed by nobody: the page must not even
// get to its signature while it cannot tell whether it was revoked.
const token = "pl1.k1." + Buffer.from(JSON.stringify({ sub: "a", aud: "http://page.test", scope: ["*"], exp: 4e12, jti: "s1" })).toString("base64url") + "." + "A".repeat(86);

test("authority: configuration mistakes fail the start", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  for (const [config, want] of [
    [{ authority: "http://127.0.0.1:9", origin: "http://page.test", keys: { k1: "A".repeat(43) } }, /keys and authority exclude each other/],
    [{ authority: "ftp://authority.test", origin: "http://page.test" }, /authority must be an http\(s\) URL/],
    [{ authority: "http://authority.test/?x=1", origin: "http://page.test" }, /authority must be an http\(s\) URL/],
    [{ authority: "http://authority.test" }, /authority needs the page origin/],
    // Approvals outside the page need the authority that signs them.
    [{ approvals: "authority", origin: "http://page.test" }, /approvals "authority" needs authority/],
    [{ authority: "http://127.0.0.1:9", origin: "http://page.test", approvals: "dialog" }, /approvals is "page" or "authority"/],
  ]) {
    const got = await page(config, token);
    assert.match(got.error || "", want, JSON.stringify(config));
  }
});

test("authority unreachable: a delegated session is refused, anonymous callers are served", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  // Port 9 (discard) on loopback: nothing listens, every fetch fails.
  const got = await page({ authority: "http://127.0.0.1:9", origin: "http://page.test", anonymous: ["*"] }, token);
  assert.deepEqual(got, { codes: ["ok", "SESSION_INVALID"] });
});
