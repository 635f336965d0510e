// How request text enters the module: judged by its length before it is
// copied, carried as exact bytes from a Uint8Array, and refused, not
// altered, when a JS string has no UTF-8 form. Its own file, so its own
// module and spies.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load } = require("../testsupport.js");

const pling = load();

const MAX = 1 << 20; // schema.MaxRequestBytes
const refused = (reason) => ({
  protocol: "pling.surface/0.1", id: null, ok: false,
  error: { code: "INVALID_REQUEST", message: "The request is not a JSON object: " + reason, details: { reason } },
});

// The largest JS string wasm_exec.js encoded for Go (syscall/js copies a
// string to Go so) and the largest Uint8Array part it copied, while f ran.
async function copies(f) {
  const enc = TextEncoder.prototype.encode, sub = Uint8Array.prototype.subarray;
  const seen = { encoded: 0, copied: 0 };
  TextEncoder.prototype.encode = function (s) { seen.encoded = Math.max(seen.encoded, String(s).length); return enc.call(this, s); };
  Uint8Array.prototype.subarray = function (a, b) { const r = sub.call(this, a, b); seen.copied = Math.max(seen.copied, r.length); return r; };
  try {
    return { value: await f(), seen };
  } finally {
    TextEncoder.prototype.encode = enc;
    Uint8Array.prototype.subarray = sub;
  }
}

const noted = [];
pling.action({ id: "note", title: "Note", params: { note: { type: "string" } }, run: ({ note }) => { noted.push(note); return note; } });

const padded = (pad) => '{"protocol":"pling.surface/0.1","id":"big","method":"describe","pad":"' + pad + '"}';

test("a request longer than the limit in UTF-16 code units is too large, and is not copied", async () => {
  await pling.ready;
  // Fewer code units than the limit but more UTF-8 bytes: copied, and the
  // runtime's own answer for text that is too large.
  const wide = padded("\u4e2d".repeat(MAX / 3 + 1));
  assert.ok(wide.length <= MAX && Buffer.byteLength(wide) > MAX);
  const runtime = await pling.surface.handle(wide);
  assert.deepEqual(runtime, refused("too_large"));

  const long = padded("x".repeat(MAX));
  const { value, seen } = await copies(() => pling.surface.handle(long));
  assert.deepEqual(value, runtime);
  assert.ok(seen.encoded < MAX, "the request was copied into the module: " + seen.encoded + " code units encoded");
});

test("a Uint8Array request longer than the limit is too large, and is not copied", async () => {
  const bytes = new TextEncoder().encode(padded("x".repeat(MAX)));
  const { value, seen } = await copies(() => pling.surface.handle(bytes));
  assert.deepEqual(value, refused("too_large"));
  assert.ok(seen.copied < MAX && seen.encoded < MAX, "the request was copied into the module: " + JSON.stringify(seen));
});

test("callTool arguments longer than the limit are too large, and are not copied", async () => {
  const args = '{"note":"' + "x".repeat(MAX) + '"}';
  const { value, seen } = await copies(() => pling.callTool("note", args));
  assert.deepEqual(value, refused("too_large"));
  assert.ok(seen.encoded < MAX, "the arguments were copied into the module: " + seen.encoded + " code units encoded");
  assert.deepEqual(noted, []);
});

test("request bytes in a Uint8Array reach the runtime unchanged: not UTF-8 is invalid_utf8", async () => {
  const ok = new TextEncoder().encode('{"protocol":"pling.surface/0.1","id":"u1","method":"invoke","capability":"note","input":{"note":"\u00e9"}}');
  const res = await pling.surface.handle(ok);
  assert.equal(res.result && res.result.value, "\u00e9", JSON.stringify(res));
  const bad = Uint8Array.from([...new TextEncoder().encode('{"protocol":"pling.surface/0.1","id":"u2","method":"describe","x":"')], (b) => b);
  const text = new Uint8Array(bad.length + 3);
  text.set(bad);
  text.set([0xff, 0x22, 0x7d], bad.length); // \xff"}
  assert.deepEqual(await pling.surface.handle(text), refused("invalid_utf8"));
});

test("a JS string with a lone surrogate is refused as invalid_utf8, not altered to U+FFFD", async () => {
  noted.length = 0;
  const req = (id, note) => '{"protocol":"pling.surface/0.1","id":"' + id + '","method":"invoke","capability":"note","input":{"note":"' + note + '"}}';
  for (const [name, note] of [["high", "a\ud800b"], ["low", "a\udc00b"], ["high at the end", "ab\udbff"], ["beside U+FFFD", "\ufffd\ud800"]]) {
    assert.deepEqual(await pling.surface.handle(req("s_" + name.replace(/\W/g, "_"), note)), refused("invalid_utf8"), name);
  }
  assert.deepEqual(noted, [], "a handler ran on altered input");
  // A request object: JSON.stringify escapes the lone surrogate, which
  // step 1 refuses as such on every host.
  const obj = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "s_obj", method: "invoke", capability: "note", input: { note: "a\ud800" } });
  assert.deepEqual(obj, refused("invalid_unicode_escape"));
  // U+FFFD itself, and a surrogate pair, are text like any other.
  const fine = await pling.surface.handle(req("s_fine", "\ufffd \ud83d\ude00"));
  assert.equal(fine.result && fine.result.value, "\ufffd \ud83d\ude00", JSON.stringify(fine));
});
