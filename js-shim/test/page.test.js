// The page-side additions of the shim without a browser: default hooks and
// their replacement, the response watchers, the module's messages(lang),
// and the WebMCP mirror's sync against a fake model context.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const path = require("path");
const vm = require("vm");
const { createPling } = require("../pling.js");
const { loadModule } = require("../node.js");

const { dist } = require("../testsupport.js");

// fakeBridge records what init got and answers handle/callTool.
function fakeBridge(answers = {}) {
  const b = {
    init(config, hooks) { b.config = JSON.parse(config); b.hooks = hooks; return true; },
    declare() { return { handle: 1 }; },
    dispose() {},
    handle: (text) => Promise.resolve(answers.handle ? answers.handle(JSON.parse(text)) : "{}"),
    tools: () => Promise.resolve(JSON.stringify(answers.tools ? answers.tools() : [])),
    callTool: (s, name, args) => Promise.resolve(JSON.stringify(answers.callTool(name, JSON.parse(args)))),
  };
  return b;
}

test("default hooks reach init; configure replaces or removes them; hooks never enter the config", async () => {
  const b = fakeBridge();
  const defaults = { handoff: () => "done", approve: () => ({}), feedback: () => [] };
  const pling = createPling(() => b, { expose: ["*"] }, defaults);
  const mine = () => "cancel";
  pling.configure({ handoff: mine, approve: false, handoffTimeoutMs: 1000 });
  await pling.ready;
  assert.equal(b.hooks.handoff, mine);
  assert.equal(b.hooks.approve, undefined);
  assert.equal(b.hooks.feedback, defaults.feedback);
  assert.deepEqual(b.config, { expose: ["*"], handoffTimeoutMs: 1000 });
});

test("watchers see every response of handle and callTool", async () => {
  const b = fakeBridge({
    handle: (req) => JSON.stringify({ id: req.id, ok: true, result: { revision: "r1" } }),
    callTool: (name) => ({ id: "t", ok: true, result: { value: name } }),
  });
  const pling = createPling(() => b, {});
  const seen = [];
  pling._watch((r) => seen.push(r.id));
  pling._watch(() => { throw new Error("a broken watcher changes nothing"); });
  const res = await pling.surface.handle({ id: "a" });
  assert.equal(res.result.revision, "r1");
  await pling.callTool("x", "{}");
  assert.deepEqual(seen, ["a", "t"]);
  assert.equal(Object.keys(pling).includes("_watch"), false, "_watch is not part of the enumerable API");
});

test("messages(lang) gives every registry i18n key and the UI strings, in English or Chinese", async (t) => {
  if (!fs.existsSync(path.join(dist, "pling.wasm"))) return t.skip("pling.wasm is not built; run make wasm");
  const bridge = await loadModule(dist);
  const en = JSON.parse(bridge.messages("en-US"));
  const zh = JSON.parse(bridge.messages("zh-CN"));
  for (const key of ["errors.HANDOFF_TIMEOUT", "errors.HANDOFF_TIMEOUT.action", "errors.RATE_LIMITED", "errors.PERMISSION_DENIED.action",
    "ui.done", "ui.cancel", "ui.approve", "ui.deny", "ui.timeLeft", "ui.handoffTitle", "ui.approvalTitle", "ui.expired",
    "ui.waiting", "ui.empty", "ui.cut", "ui.escaped", "ui.moreInput"]) {
    assert.ok(en[key], "en lacks " + key);
    assert.ok(zh[key], "zh lacks " + key);
  }
  assert.deepEqual(Object.keys(en).sort(), Object.keys(zh).sort());
  assert.equal(en["errors.HANDOFF_CANCELLED"], "The person cancelled the handoff");
  assert.equal(zh["errors.HANDOFF_CANCELLED"], "用户取消人工接力");
  assert.match(en["ui.timeLeft"], /\{time\}/);
  assert.match(zh["ui.timeLeft"], /\{time\}/);
  assert.deepEqual(JSON.parse(bridge.messages("fr")), en, "anything not Chinese is English");
});

// webmcp runs js-shim/webmcp.js against a fake page: a pling whose tools
// the test controls and a model context with registerTool(tool, {signal}).
// webmcp runs webmcp.js against a fake model context: tools is the
// module's list, pending the shim's declarations; o.native makes its
// registerTool read as the browser's own (a bound function's source is
// "[native code]"), o.answer(input) is what an invoke answers.
function webmcp(tools, pending, o = {}) {
  const registered = new Map();
  const listeners = {};
  const watchers = [];
  const calls = [];
  const cancelled = [];
  let hold = null; // when set, an invoke waits for it
  const pling = {
    tools: () => Promise.resolve(tools()),
    _invoke: (capability, input, id) => {
      calls.push([capability, JSON.stringify(input), id]);
      return (hold || Promise.resolve()).then(() => (o.answer ? o.answer(input) : { ok: true, result: { value: 1 } }));
    },
    _toolText: (res) => Promise.resolve("OK: text of " + JSON.stringify(res)),
    surface: { cancel: (id) => { cancelled.push(id); return Promise.resolve(true); } },
    _watch: (f) => watchers.push(f),
    _pending: pending || null,
  };
  const mc = {
    registerTool(tool, opts) {
      if (registered.has(tool.name)) return Promise.reject(new Error("duplicate " + tool.name));
      registered.set(tool.name, tool);
      opts.signal.addEventListener("abort", () => { if (registered.get(tool.name) === tool) registered.delete(tool.name); });
      return Promise.resolve();
    },
  };
  if (o.native) mc.registerTool = mc.registerTool.bind(mc);
  const document = { modelContext: mc, addEventListener: (t, f) => { listeners[t] = f; } };
  const ctx = vm.createContext({ pling, document, navigator: {}, console, setTimeout, clearTimeout, AbortController, Map, Set, JSON, Promise, Uint8Array, crypto: globalThis.crypto });
  ctx.globalThis = ctx;
  vm.runInContext(fs.readFileSync(path.join(__dirname, "..", "webmcp.js"), "utf8"), ctx);
  const settle = () => new Promise((r) => setTimeout(r, 20));
  return { registered, watchers, calls, cancelled, listeners, settle, pling, setHold: (p) => { hold = p; } };
}

test("webmcp: before the module starts, simple declarations are registered from the shim, without pling.tools()", async () => {
  const decls = [
    { kind: "state", spec: { key: "n" }, fns: {} },
    { kind: "action", spec: { id: "cart.add", title: "Add to cart", description: "One item", params: { sku: { type: "string", required: true, maxLength: 8 }, n: { type: "integer", minimum: 1 } } }, fns: {} },
    { kind: "action", spec: { id: "cart.clear", title: "Empty the cart", risk: "destructive", approval: true }, fns: { available: () => true } },
    { kind: "action", spec: { id: "cart.hidden", title: "Hidden" }, fns: { available: () => "It is not visible on the page" } },
    { kind: "action", spec: { id: "admin.x", title: "Not exposed" }, fns: {} },
  ];
  let asked = 0;
  const w = webmcp(() => { asked++; return []; }, { config: { expose: ["cart.*"], origin: "https://shop.test" }, decls });
  await w.settle();
  assert.equal(asked, 0, "pling.tools() (the module) was not asked");
  assert.deepEqual([...w.registered.keys()], ["cart_add", "cart_clear"]);
  const add = w.registered.get("cart_add"), clear = w.registered.get("cart_clear");
  assert.equal(add.description, "Add to cart. One item");
  assert.deepEqual(JSON.parse(JSON.stringify(add.inputSchema)), { type: "object", additionalProperties: false, properties: { n: { type: "integer", minimum: 1 }, sku: { type: "string", maxLength: 8 } }, required: ["sku"] });
  assert.deepEqual({ ...add.annotations }, { readOnlyHint: false, consequentialHint: false, untrustedContentHint: false });
  assert.equal(clear.description, "Empty the cart. A person on the page must approve each call; the call waits for them up to 45 seconds");
  assert.deepEqual({ ...clear.annotations }, { readOnlyHint: false, consequentialHint: true, untrustedContentHint: false });

  // A row action declared for every record of its kind is rendered here,
  // with its record parameter and offscreen rule.
  const w2 = webmcp(() => { asked++; return []; }, { config: { expose: ["*"] }, decls: [{ kind: "records", spec: { kind: "ticket" }, fns: {} }, { kind: "action", spec: { id: "close", title: "Close", record: { kind: "ticket" } }, fns: {} }] });
  await w2.settle();
  assert.equal(asked, 0, "a row action for every ticket needs no module");
  assert.deepEqual([...w2.registered.keys()], ["close__ticket"]);
  assert.equal(w2.registered.get("close__ticket").description, "Close. Only tickets in view (else ACTION_UNAVAILABLE: scroll or filter the page first)");
  assert.deepEqual(JSON.parse(JSON.stringify(w2.registered.get("close__ticket").inputSchema)), { type: "object", additionalProperties: false, properties: { record: { type: "string", description: "The ticket record to act on: its id, or its label as people read it (the whole label or its first word)" } }, required: ["record"] });

  // What needs the runtime is the module's to render: it is asked. A
  // per-row declaration; a row check that says no without its record.
  const cases = [
    { kind: "action", spec: { id: "close", title: "Close", record: { kind: "ticket", id: "t1" } }, fns: {} },
    { kind: "action", spec: { id: "close", title: "Close", record: { kind: "ticket" } }, fns: { available: (id) => (id ? true : "Which ticket?") } },
  ];
  for (const [i, d] of cases.entries()) {
    const w3 = webmcp(() => { asked++; return []; }, { config: { expose: ["*"] }, decls: [d] });
    await w3.settle();
    assert.equal(asked, i + 1, "case " + i + ": the module was asked");
  }
});

test("webmcp: on native WebMCP a call that ran answers its text alone, one that failed MCP's tool error with the same text", async () => {
  const answers = {
    ran: { ok: true, result: { value: 1 } },
    refused: { ok: false, error: { code: "INVALID_PARAMS", message: "The page's form did not accept the input" } },
    failed: { ok: true, result: { error: { code: "EXECUTION_FAILED", message: "The handler threw" } } },
  };
  const w = webmcp(() => [{ name: "cart_add", description: "Add to cart", parameters: { type: "object" }, capability: "cart.add" }], null, { native: true, answer: (input) => answers[input.sku] });
  await w.settle();
  const tool = w.registered.get("cart_add");
  assert.equal(await tool.execute({ sku: "ran" }), "OK: text of " + JSON.stringify(answers.ran));
  for (const sku of ["refused", "failed"]) {
    const out = await tool.execute({ sku });
    assert.deepEqual(JSON.parse(JSON.stringify(out)), { content: [{ type: "text", text: "OK: text of " + JSON.stringify(answers[sku]) }], isError: true }, sku);
  }
});

test("webmcp: registers the tools, executes through callTool, follows revisions", async () => {
  let list = [{ name: "cart_add", description: "Add to cart", parameters: { type: "object" }, capability: "cart.add" }];
  const w = webmcp(() => list);
  await w.settle();
  assert.deepEqual([...w.registered.keys()], ["cart_add"]);
  const tool = w.registered.get("cart_add");
  assert.deepEqual(tool.inputSchema, { type: "object" });
  const out = await tool.execute({ sku: "A1" });
  assert.deepEqual(w.calls.map((c) => c.slice(0, 2)), [["cart.add", '{"sku":"A1"}']]);
  assert.match(w.calls[0][2], /^webmcp_/);
  assert.equal(out.isError, false);
  assert.deepEqual(out.structuredContent, { ok: true, result: { value: 1 } });
  assert.equal(out.content[0].text, "OK: text of " + JSON.stringify(out.structuredContent));

  // A call the consumer gives up on is cancelled in the page, by its id.
  let release;
  w.setHold(new Promise((r) => { release = r; }));
  const ctl = new AbortController();
  const pending = tool.execute({ sku: "B2" }, { signal: ctl.signal });
  ctl.abort();
  assert.deepEqual(w.cancelled, [w.calls[1][2]]);
  release();
  await pending;
  w.setHold(null);

  // An invoke that changed the capabilities: removed tools go, new ones come.
  list = [{ name: "checkout", description: "Check out", parameters: { type: "object" }, capability: "checkout" }];
  w.watchers.forEach((f) => f({ ok: true, result: { observation: { capabilitiesChanged: true, revision: "r2" } } }));
  await w.settle();
  assert.deepEqual([...w.registered.keys()], ["checkout"]);

  // A changed description re-registers the tool under the same name.
  list = [{ name: "checkout", description: "Check out and pay", parameters: { type: "object" }, capability: "checkout" }];
  w.watchers.forEach((f) => f({ ok: true, result: { revision: "r3" } }));
  await w.settle();
  assert.equal(w.registered.get("checkout").description, "Check out and pay");

  // The same revision again does nothing; a protocol failure does nothing.
  list = [];
  w.watchers.forEach((f) => f({ ok: true, result: { revision: "r3" } }));
  w.watchers.forEach((f) => f({ ok: false, error: { code: "RATE_LIMITED" } }));
  await w.settle();
  assert.deepEqual([...w.registered.keys()], ["checkout"]);

  // A person's change on the page resyncs shortly after.
  w.listeners.click();
  await new Promise((r) => setTimeout(r, 350));
  assert.deepEqual([...w.registered.keys()], []);
  assert.ok(w.pling._webmcp, "the mirror is reachable for debugging");
});
