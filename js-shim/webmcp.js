/* Pling → WebMCP mirror (docs/agent.md), loaded by pling.js when the page
 * has a model context (document.modelContext, or the older
 * navigator.modelContext; native or @mcp-b/webmcp-polyfill).
 *
 * Each tool of pling.tools() — the capabilities exposed to this page's
 * anonymous session, named as model APIs accept — is registered with
 * registerTool({name, description, inputSchema, execute}, {signal}); its
 * execute calls pling.callTool, so every call takes the whole Surface path
 * (gate, validation, expectations), and returns the Surface response.
 * Tools are removed by aborting their registration's signal, as the
 * current WebMCP draft and the polyfill define it (unregisterTool and
 * provideContext were removed from both).
 *
 * The list is kept in step with the runtime's revision: after an invoke
 * whose observation says capabilitiesChanged, after any response whose
 * revision differs from the last one seen, and shortly after the person
 * changes something on the page (availability follows page state). */
(function (root) {
  "use strict";
  var pling = root.pling, doc = root.document;
  var mc = doc.modelContext || root.navigator.modelContext;
  if (!pling || !mc || typeof mc.registerTool !== "function" || pling._webmcp) return;
  var live = new Map(); // tool name → {key, ctl}
  var revision = null, running = null, again = false, timer = 0;

  function key(tool) { return JSON.stringify([tool.description, tool.parameters]); }

  function result(res) {
    var failed = !res.ok || !!(res.result && res.result.error);
    return { content: [{ type: "text", text: JSON.stringify(res) }], structuredContent: res, isError: failed };
  }

  function register(tool) {
    var ctl = new AbortController(), name = tool.name;
    live.set(name, { key: key(tool), ctl: ctl });
    return Promise.resolve().then(function () {
      return mc.registerTool({
        name: name,
        description: tool.description,
        inputSchema: tool.parameters,
        execute: function (args) {
          return pling.callTool(name, JSON.stringify(args || {})).then(result);
        }
      }, { signal: ctl.signal });
    }).catch(function (e) {
      if (ctl.signal.aborted) return;
      if (live.get(name) && live.get(name).ctl === ctl) live.delete(name);
      if (root.console) console.warn("pling: WebMCP refused tool " + name + ": " + (e && e.message));
    });
  }

  function unregister(name) {
    var e = live.get(name);
    live.delete(name);
    if (e) e.ctl.abort();
  }

  // sync makes the registered tools equal to pling.tools(); calls made
  // while one runs are folded into one more run.
  function sync() {
    if (running) { again = true; return running; }
    running = pling.tools().then(function (tools) {
      var want = new Map();
      tools.forEach(function (t) { want.set(t.name, t); });
      live.forEach(function (e, name) {
        var t = want.get(name);
        if (!t || key(t) !== e.key) unregister(name);
      });
      return Promise.all(tools.filter(function (t) { return !live.has(t.name); }).map(register));
    }).catch(function (e) {
      if (root.console) console.warn("pling: WebMCP sync failed: " + (e && e.message));
    }).then(function () {
      running = null;
      if (again) { again = false; return sync(); }
    });
    return running;
  }

  pling._watch(function (res) {
    var r = res && res.ok && res.result;
    if (!r) return;
    var obs = r.observation, rev = r.revision || (obs && obs.revision);
    if ((obs && obs.capabilitiesChanged) || (rev && rev !== revision)) {
      revision = rev || revision;
      sync();
    }
  });
  function soon() { clearTimeout(timer); timer = setTimeout(sync, 300); }
  ["click", "change", "submit"].forEach(function (t) { doc.addEventListener(t, soon, true); });
  // For tests and debugging: the live registrations and a way to resync.
  Object.defineProperty(pling, "_webmcp", { value: { tools: live, sync: sync } });
  sync();
})(globalThis);
