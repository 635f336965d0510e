/* Pling → WebMCP mirror (docs/page-api.md §5), loaded by pling.js when the
 * page has a model context (document.modelContext, or the older
 * navigator.modelContext; native or @mcp-b/webmcp-polyfill).
 *
 * Each tool of pling.tools() — the capabilities exposed to this page's
 * anonymous session, named as model APIs accept — is registered with
 * registerTool({name, title, description, inputSchema, annotations,
 * execute}, {signal}). execute invokes the capability under an id of its
 * own, so every call takes the whole Surface path (gate, validation,
 * approval, expectations), and a call the consumer gives up on (execute's
 * signal, or the toolcancel event) is cancelled in the page: an approval
 * or handoff dialog closes and nothing runs afterwards.
 *
 * The result is written for a model (modeltool.Text: code first, what
 * happened, the proof, the next step). Native Chromium serializes what
 * execute returns into the one string the model reads, so there a call
 * that ran is that text alone, and one that failed is MCP's tool error,
 * {content: [the text], isError: true}: a rejection would reach Playwright
 * MCP and the page's own executeTool as the browser's "the invocation
 * failed", without the text (RATIONALE.md). A polyfill keeps MCP's shape
 * for both, the text beside the Surface response as structuredContent.
 *
 * Tools are removed by aborting their registration's signal, as the
 * current WebMCP draft and the polyfill define it. The list is kept in
 * step with the runtime's revision: after an invoke whose observation says
 * capabilitiesChanged, after any response whose revision differs from the
 * last one seen, and shortly after the person changes something on the
 * page (availability follows page state). */
(function (root) {
  "use strict";
  var pling = root.pling, doc = root.document;
  var mc = doc.modelContext || root.navigator.modelContext;
  if (!pling || !mc || typeof mc.registerTool !== "function" || pling._webmcp) return;
  // WINDOW_MS is how long a WebMCP call waits for a person's approval:
  // shorter than the MCP TypeScript SDK's default request time-out (60 s),
  // which hosts of Chrome DevTools MCP or Playwright MCP use unless they
  // set their own, so an approval does not outlive the agent that asked. A person
  // who approves later runs nothing (docs/page-api.md §5).
  var WINDOW_MS = 45000;
  // REPLAY_MS is how long after a call's answer a navigation the call
  // caused is replayed: the answer must reach a consumer that reads it
  // in the page (Playwright MCP's evaluate) before the new document
  // commits, and on a loaded machine a task later was not always enough
  // (RATIONALE.md).
  var REPLAY_MS = 250;
  var live = new Map(); // tool name → {key, ctl}
  var calls = new Map(); // tool name → Set of cancel functions of its calls in flight
  var revision = null, running = null, again = false, timer = 0, seq = 0;
  // Native: the browser's own registerTool, which serializes the result.
  var native = /\[native code\]/.test(Function.prototype.toString.call(mc.registerTool));

  // canon is JSON with the keys of every object sorted, so that a tool
  // built here and the module's compare by value.
  function canon(v) {
    if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
    if (v && typeof v === "object") {
      return "{" + Object.keys(v).sort().filter(function (k) { return v[k] !== undefined; }).map(function (k) { return JSON.stringify(k) + ":" + canon(v[k]); }).join(",") + "}";
    }
    return JSON.stringify(v);
  }
  function key(tool) { return canon([tool.title || "", tool.description, tool.parameters, tool.annotations]); }

  // Before the module starts, the tools are built here from the
  // declarations pling.js holds, as modeltool.List renders them, so that a
  // visit without a call loads no module and the tools are registered
  // before the page's load event. The common cases: plain actions, row
  // actions declared once for every record of their kind (an
  // approve@order tool, listed when its check without a record says yes,
  // as runtime capAvailable does), regions (an open modal hides the rest)
  // and handoffs. Anything else (per-row declarations, a row check that
  // needs a record, sessions or any configure, an asynchronous or
  // failing availability check, a parameter with items) returns null and
  // the module is loaded to say. Once the module runs, sync compares its
  // list with what was registered here (drift counts the differences:
  // TestWebMCPLazy requires none).
  var PROP = ["type", "description", "enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "default"];
  var ID = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*(@[a-z][a-z0-9_-]*)?$/, KIND = /^[a-z][a-z0-9_-]*$/;
  function toolName(id) {
    return id.replace(/\./g, "_").replace(/@/g, "__").replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 64);
  }
  function preTools() {
    var p = pling._pending;
    // A configure may come from a script that ran before pling.js; the
    // module holds it to the script tag (docs/page-api.md §2.7), so it
    // says which tools there are.
    if (!p || pling.configured) return null;
    var cfg = p.config, scope = cfg.anonymous || ["*"], byID = {}, caps = [];
    for (var k in cfg) if (["expose", "origin", "anonymous"].indexOf(k) < 0) return null;
    function match(pats, id) {
      return [].concat(pats || []).some(function (pt) {
        return new RegExp("^" + String(pt).split("*").map(function (x) { return x.replace(/[.+?^${}()|[\]\\]/g, "\\$&"); }).join(".*") + "$").test(id);
      });
    }
    // refused: what the module refuses to declare (runtime refuseMarkup):
    // markup inside the site's user content, a form that would send
    // elsewhere.
    function refused(m) {
      var t = m && m.submitTarget;
      return m && (m.userContent || (t && !/^_self$/i.test(t)) || (m.submitTo && (function () {
        try { return new URL(m.submitTo).origin !== cfg.origin; } catch (e) { return true; }
      })()));
    }
    // Regions first, as runtime regions does: which are active, and which
    // active ones are modal (an open modal hides every action outside it;
    // a modal read from markup, only the markup ones).
    var active = {}, modal = {}, modals = 0, smodals = 0, i, d, a;
    for (i = 0; i < p.decls.length; i++) {
      d = p.decls[i];
      if (d.disposed || d.kind !== "region" || refused(d.spec.markup)) continue;
      a = d.spec;
      if (typeof a.id !== "string" || !KIND.test(a.id) || active.hasOwnProperty(a.id)) return null;
      var on = true;
      if (d.fns.active) { try { on = !!d.fns.active(); } catch (e) { on = false; } }
      active[a.id] = on;
      if (on && a.modal) { modal[a.id] = true; modals++; if (!a.markup) smodals++; }
    }
    for (i = 0; i < p.decls.length; i++) {
      d = p.decls[i]; a = d.spec;
      if (d.disposed || d.kind === "state" || d.kind === "guide" || d.kind === "records" || d.kind === "region" || refused(a.markup)) continue;
      if (d.kind !== "action") return null;
      if (typeof a.id !== "string" || !ID.test(a.id) || typeof a.title !== "string" || !a.title || (a.region !== undefined && typeof a.region !== "string") || (a.risk && ["read", "write", "destructive"].indexOf(a.risk) < 0)) return null;
      var h = a.handoff;
      if (h !== undefined && (!h || typeof h !== "object" || typeof h.prompt !== "string" || (h.timeoutMs !== undefined && !(Number.isInteger(h.timeoutMs) && h.timeoutMs >= 0)))) return null;
      var r = a.record, cap = a.id;
      if (r) {
        // A row action for every record of a kind: the capability ID@kind.
        if (typeof r !== "object" || r.id !== undefined || typeof r.kind !== "string" || !KIND.test(r.kind) || a.id.indexOf("@") >= 0 || (a.params && a.params.record)) return null;
        for (k in r) if (k !== "kind" && k !== "allowOffscreen") return null;
        if (r.allowOffscreen !== undefined && typeof r.allowOffscreen !== "boolean") return null;
        cap = a.id + "@" + r.kind;
      }
      if (byID[a.id] || byID[cap]) return null;
      byID[a.id] = byID[cap] = 1;
      if (!match(cfg.expose, cap) || !match(scope, cap)) continue;
      // Hidden by an open modal, or its region is not active: not listed.
      if ((modals && !modal[a.region || ""] && (a.markup || smodals)) || (a.region && active[a.region] === false)) continue;
      if (d.fns.available) {
        var av;
        try { av = d.fns.available(); } catch (e) { return null; }
        if (av && typeof av.then === "function") return null;
        // A row check may need its record: the module asks row by row.
        if (typeof av === "string" || !av) { if (r) return null; continue; }
      }
      caps.push({ id: cap, a: a });
    }
    caps.sort(function (x, y) { return x.id < y.id ? -1 : x.id > y.id ? 1 : 0; });
    var used = {}, tools = [], names = caps.map(function (c) { return toolName(c.id); });
    for (i = 0; i < caps.length; i++) {
      a = caps[i].a;
      var name = names[i], params = { type: "object", additionalProperties: false }, req = [], ps = a.params || {};
      if (used[name]) return null;
      used[name] = 1;
      var pnames = Object.keys(ps).sort();
      if (pnames.length || a.record) params.properties = {};
      for (var j = 0; j < pnames.length; j++) {
        var q = ps[pnames[j]], o = {};
        if (!q || typeof q !== "object") return null;
        for (k in q) if (k !== "required" && PROP.indexOf(k) < 0) return null;
        PROP.forEach(function (f) { if (q[f] !== undefined && q[f] !== null && q[f] !== "" && !(Array.isArray(q[f]) && !q[f].length)) o[f] = q[f]; });
        params.properties[pnames[j]] = o;
        if (q.required) req.push(pnames[j]);
      }
      var risk = a.risk || "write", desc = a.description ? sentences(a.title, a.description) : a.title;
      if (a.record) {
        var kind = a.record.kind;
        params.properties.record = { type: "string", description: "The " + kind + " record to act on: its id, or its label as people read it (the whole label or its first word)" };
        req.unshift("record");
        desc = sentences(desc, offscreen(a, kind, caps, names));
      }
      if (req.length) params.required = req;
      if (a.handoff) desc = sentences(desc, "A person finishes it on the page; the call waits for them up to " + minutes(a.handoff.timeoutMs || 300000));
      else if (a.approval) desc = sentences(desc, "A person on the page must approve each call; the call waits for them up to " + minutes(WINDOW_MS));
      tools.push({
        name: name, title: a.title, description: desc, parameters: params, capability: caps[i].id,
        annotations: { readOnlyHint: risk === "read", consequentialHint: risk === "destructive" || !!a.approval, untrustedContentHint: risk === "read" }
      });
    }
    return tools;
  }
  // minutes says a wait in words, as runtime minutes does.
  function minutes(ms) {
    if (ms >= 60000 && ms % 60000 === 0) return ms === 60000 ? "1 minute" : ms / 60000 + " minutes";
    return Math.floor((ms + 999) / 1000) + " seconds";
  }
  // sentences joins a description and the next sentence as runtime
  // sentences does: no ". " after text that already ends a sentence.
  function sentences(d, next) { return (/[.!?\u2026\u3002\uff01\uff1f]$/.test(d) ? d + " " : d + ". ") + next; }
  // offscreen says which records a row tool acts on, as runtime
  // offscreenRule does.
  function offscreen(a, kind, caps, names) {
    if (a.record.allowOffscreen) return "Any " + kind + ", in view or not";
    for (var i = 0; i < caps.length; i++) {
      var o = caps[i].a;
      if (o !== a && o.record && o.record.kind === kind && o.record.allowOffscreen && o.risk === "read") return "Only " + kind + "s in view: call " + names[i] + " first to bring one into view";
    }
    return "Only " + kind + "s in view (else ACTION_UNAVAILABLE: scroll or filter the page first)";
  }
  var drift = 0, pre = false;

  function callID() {
    var b = new Uint8Array(8);
    root.crypto.getRandomValues(b);
    return "webmcp_" + (++seq) + "_" + Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
  }

  // A cross-document navigation a call causes (a markup form posting to
  // this origin, a handler's location.assign, a link's click) would end
  // the document, and with it the consumer's evaluation, before the
  // answer is out: while a call runs it is held (the Navigation API's
  // navigate event, cancelled), the answer says where the page goes, and
  // it is replayed REPLAY_MS after the answer settled, once the consumer
  // has the answer (RATIONALE.md). Not held: what the person starts
  // (userInitiated), same-document changes, downloads, traversals,
  // another origin, a POST whose form is not the one just submitted or
  // whose submitter overrides the form's action, method or target or is
  // an image button.
  var nav = root.navigation, busy = 0, held = null, sent = null, waiting = null;
  if (nav && typeof nav.addEventListener === "function") {
    doc.addEventListener("submit", function (e) { sent = busy ? { form: e.target, by: e.submitter, e: e } : null; }, true);
    nav.addEventListener("navigate", function (e) {
      var to = e.destination, f = e.formData && sent, u;
      try { u = new URL(to.url); } catch (x) { return; }
      if (!busy || held || !e.cancelable || e.userInitiated || e.hashChange || e.downloadRequest || to.sameDocument ||
        e.navigationType === "traverse" || u.origin !== root.location.origin) return;
      if (e.formData && (!f || (e.sourceElement && e.sourceElement !== f.form && e.sourceElement !== f.by) ||
        (f.by && (f.by.type === "image" || ["formaction", "formmethod", "formenctype", "formtarget"].some(function (a) { return f.by.hasAttribute(a); }))))) return;
      e.preventDefault();
      held = { url: to.url, type: e.navigationType, post: e.formData ? f : null };
      if (waiting) waiting();
    });
  }
  function replay(h) {
    setTimeout(function () {
      var by = h.post && h.post.by, extra;
      if (!h.post) return h.type === "reload" ? root.location.reload() : h.type === "replace" ? root.location.replace(h.url) : root.location.assign(h.url);
      // The same form, without its submit handlers again; the submitter's
      // name and value as a hidden field, as the browser sends them.
      if (by && by.name) {
        extra = doc.createElement("input");
        extra.type = "hidden"; extra.name = by.name; extra.value = by.value;
        h.post.form.appendChild(extra);
      }
      HTMLFormElement.prototype.submit.call(h.post.form);
      if (extra) extra.remove();
    }, REPLAY_MS);
  }

  function result(res, h) {
    return pling._toolText(res).then(function (text) {
      if (h) {
        var u = new URL(h.url);
        text += "\nThe page goes to " + (u.origin === root.location.origin ? u.pathname + u.search : h.url) + " once this answer is sent.";
      }
      var failed = !res.ok || !!(res.result && res.result.error), content = [{ type: "text", text: text }];
      if (native) return failed ? { content: content, isError: true } : text;
      return { content: content, structuredContent: res, isError: failed };
    });
  }

  // call invokes the tool's capability; signal, when it aborts, cancels
  // the invoke in the page (Runtime.Cancel: the dialog closes, the run
  // never starts; past that point the answer tells the outcome).
  function call(tool, args, signal) {
    var id = callID(), set = calls.get(tool.name) || new Set();
    calls.set(tool.name, set);
    function cancel() { pling.surface.cancel(id); }
    if (signal) {
      if (signal.aborted) return Promise.reject(signal.reason || new Error("cancelled"));
      signal.addEventListener("abort", cancel);
    }
    set.add(cancel);
    busy++;
    var h = null;
    // A form's submission navigates in a task of its own after the submit
    // event: one the page let go (not a dialog's) that has not navigated
    // yet is waited for, at most 2 s, before the answer.
    function end() {
      var s = busy === 1 && !held && sent && !sent.e.defaultPrevented && !/^dialog$/i.test(sent.by && sent.by.getAttribute("formmethod") || sent.form.method);
      return (s ? new Promise(function (ok) { waiting = ok; setTimeout(ok, 2e3); }) : Promise.resolve()).then(function () {
        waiting = null;
        if (!--busy) { h = held; held = sent = null; }
      });
    }
    return pling._invoke(tool.capability, args || {}, id, WINDOW_MS).then(function (res) {
      return end().then(function () { return result(res, h); });
    }, function (e) { return end().then(function () { throw e; }); }).finally(function () {
      set.delete(cancel);
      if (signal) signal.removeEventListener("abort", cancel);
      if (h) replay(h);
    });
  }
  // toolcancel names the tool whose call the consumer gave up on: every
  // call of it in flight is cancelled (a browser whose execute gets no
  // signal still reaches us).
  if (typeof mc.addEventListener === "function") {
    mc.addEventListener("toolcancel", function (e) {
      var set = e && calls.get(e.toolName);
      if (set) set.forEach(function (c) { c(); });
    });
  }

  function register(tool) {
    var ctl = new AbortController(), name = tool.name;
    live.set(name, { key: key(tool), ctl: ctl });
    var def = {
      name: name,
      title: tool.title || undefined,
      description: tool.description,
      inputSchema: tool.parameters,
      annotations: tool.annotations,
      execute: function (args, client) {
        return call(tool, args, client && client.signal);
      }
    };
    // Called at once (not in a later step), so a tool is in the browser's
    // list as soon as sync has run; a refusal arrives as a rejection.
    var done;
    try { done = Promise.resolve(mc.registerTool(def, { signal: ctl.signal })); } catch (e) { done = Promise.reject(e); }
    return done.catch(function (e) {
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
    var early = preTools();
    if (early && !running) {
      // Before the module: the list is the page's own, known now; it is
      // registered synchronously, so that a consumer looking right after
      // (a load listener, a navigation's snapshot) finds every tool, even
      // while the browser is still answering earlier registrations.
      var want = new Map();
      early.forEach(function (t) { want.set(t.name, t); });
      pre = true;
      live.forEach(function (e, name) {
        var t = want.get(name);
        if (!t || key(t) !== e.key) unregister(name);
      });
      return Promise.all(early.filter(function (t) { return !live.has(t.name); }).map(register));
    }
    if (running) { again = true; return running; }
    var module = !early;
    running = (early ? Promise.resolve(early) : pling.tools()).then(function (tools) {
      var want = new Map();
      tools.forEach(function (t) { want.set(t.name, t); });
      if (module && pre) {
        pre = false;
        live.forEach(function (e, name) { var t = want.get(name); if (!t || key(t) !== e.key) drift++; });
        want.forEach(function (t, name) { if (!live.has(name)) drift++; });
      }
      if (early) pre = true;
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
  // A declared form's values are its tool's defaults, and a page's
  // script may fill a form at any time (from its own fetch), which fires
  // no event and moves no MutationObserver. fresh compares the values of
  // the page's fields with its last look; only when one changed does
  // pling._forms read the forms again (declaring again a form whose
  // values changed), and only then are the tools registered again. A
  // consumer that lists the tools in this script context (getTools) gets
  // the values as they are then; one that reads the browser's list from
  // elsewhere (DevTools' WebMCP domain, Playwright MCP's isolated world)
  // within FORMS_MS, how often fresh runs by itself (RATIONALE.md).
  // FIELDS: only the fields a declared form reads (pling.js's fields),
  // so a page with thousands of other inputs (a grid's rows) costs
  // nothing here each second.
  var FORMS_MS = 1000, seen = "", FIELDS = "[data-pling-param],form[toolname] [name],form[data-pling-toolname] [name]";
  function fresh() {
    var k = [].map.call(doc.querySelectorAll(FIELDS), function (i) { return i.value + i.checked; }).join("\n");
    if (k === seen) return running || Promise.resolve();
    seen = k;
    return pling._forms() ? sync() : running || Promise.resolve();
  }
  if (pling._forms) {
    var listed = mc.getTools;
    if (typeof listed === "function") {
      try {
        mc.getTools = function () { var a = arguments; return fresh().then(function () { return listed.apply(mc, a); }); };
      } catch (e) { /* a model context that keeps its own getTools: the interval still serves */ }
    }
    setInterval(fresh, FORMS_MS);
  }
  // For tests and debugging: the live registrations and a way to resync.
  Object.defineProperty(pling, "_webmcp", { value: { tools: live, sync: sync, native: native, get drift() { return drift; } } });
  // The page's own declarations are in once its markup is read
  // (DOMContentLoaded, before load); declarations made later are taken in
  // at load.
  sync();
  if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", function () { sync(); });
  // At load, in the capture phase: before the page's own load listeners,
  // which may look for the tools (what layout or a late declaration
  // changed since DOMContentLoaded is registered by then; the sync's
  // promise steps run in the microtask checkpoint after this listener).
  if (doc.readyState === "loading" || doc.readyState === "interactive") root.addEventListener("load", function () { sync(); }, true);
})(globalThis);
