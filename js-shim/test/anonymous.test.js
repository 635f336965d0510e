// A page with session keys: callers without a session reach only the
// page's anonymous allowlist (config.anonymous, data-anonymous in a page),
// in describe and invoke alike. One module per process, so this file has
// its own page.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load, requests } = require("../testsupport.js");

// Any 32 bytes are an Ed25519 public key; no token is signed here.
const key = Buffer.alloc(32, 7).toString("base64url");
const pling = load({ keys: { k1: key }, origin: "https://shop.example", anonymous: ["cart.*"] });
const ran = [];
for (const id of ["cart.add", "cart.remove", "admin.wipe"]) pling.action({ id, title: id, run: () => { ran.push(id); return true; } });

const { req } = requests(pling, "an");

test("anonymous callers reach the anonymous allowlist ∩ the site allowlist, and no more", async () => {
  const d = await pling.surface.handle(req("describe"));
  assert.equal(d.ok, true);
  assert.deepEqual(d.result.capabilities.map((c) => c.id), ["cart.add", "cart.remove"]);
  const wipe = await pling.surface.handle(req("invoke", { capability: "admin.wipe" }));
  assert.equal(wipe.ok, false);
  assert.equal(wipe.error.code, "CAPABILITY_NOT_EXPOSED");
  const add = await pling.surface.handle(req("invoke", { capability: "cart.add" }));
  assert.equal(add.ok, true);
  assert.deepEqual(ran, ["cart.add"]);
  const tools = await pling.tools();
  assert.deepEqual(tools.map((t) => t.capability), ["cart.add", "cart.remove"]);
});
