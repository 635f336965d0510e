/* Pling page shim: window.pling, declarations queued until the module is
 * ready, the module loaded lazily, declarative data-pling-* markup kept in
 * sync. The logic lives in Go (pling.wasm); this file only carries values
 * across. docs/page-api.md. */
(function (root) {
  "use strict";

  // cut shortens s to n code points, as Go counts the runtime's length
  // limits (runes), never splitting a surrogate pair; .slice counts UTF-16
  // units.
  function cut(s, n) {
    if (s.length <= n) return s;
    var a = Array.from(s);
    return a.length > n ? a.slice(0, n).join("") : s;
  }

  // createPling builds a pling object. load() must resolve to the module's
  // bridge (globalThis.__plingBridge once the Go module has started);
  // defaultHooks are the hooks used unless the page configures its own.
  // loader holds where the page's files are served (assets, wasm,
  // wasmExec, ui, webmcpSrc): configure sets them; they stay in JS.
  // data, in a page, is the script tag's data attributes: the module
  // holds configure to what they set (data-expose is never widened,
  // data-approvals="authority" never undone; docs/page-api.md §2.7).
  function createPling(load, defaults, defaultHooks, loader, data) {
    loader = loader || {};
    var bridge = null, loading = null, configured = false, started = false, configs = 0;
    var config = Object.assign({}, defaults);
    var hooks = Object.assign({}, defaultHooks);
    var queue = [], watchers = [], warned = {};

    function start() {
      if (!loading) {
        // A module that could not be fetched or started is not remembered:
        // the next use tries again (one network error must not disable
        // the page's pling until a reload).
        var attempt = Promise.resolve().then(load).catch(function (e) {
          if (loading === attempt) loading = null;
          throw e;
        }).then(function (b) {
          var r = b.init(JSON.stringify(config), hooks, data);
          if (r && r.error) throw new Error(r.error);
          bridge = b;
          started = true;
          queue.splice(0).forEach(function (d) { d.flush(); });
          return api;
        });
        loading = attempt;
      }
      return loading;
    }

    function identity(fns) {
      var s = "";
      for (var k in fns) {
        var f = fns[k];
        s += k + ":" + (Array.isArray(f) ? f.map(String).join("|") : String(f)) + ";";
      }
      return s;
    }

    // declare registers a declaration now or when the module is ready. The
    // handle's `declared` promise gives the outcome: {ok, code?, message?}.
    function declare(kind, spec, fns) {
      var h = { id: 0, disposed: false, kind: kind, spec: spec, fns: fns }, settle;
      h.declared = new Promise(function (r) { settle = r; });
      h.flush = function () {
        if (h.disposed) return;
        var r = bridge.declare(kind, JSON.stringify(spec), fns);
        if (r.error) {
          settle({ ok: false, error: r.error });
          if (root.console) console.error(r.error); // "pling: …" once (Go's authorText)
          return;
        }
        h.id = r.handle;
        h.code = r.code;
        if (r.unexposed && !warned[spec.id] && root.console) {
          warned[spec.id] = 1;
          console.warn("pling: action \"" + cut(String(spec.id), 128) + "\" is declared but not exposed: the site allowlist (data-expose, configure({expose})) is \"" +
            [].concat(config.expose || []).join(" ") + "\"; agents cannot see it");
        }
        if (r.code && root.console) console.warn("pling: " + r.code + ": " + r.message);
        settle(r.code ? { ok: false, code: r.code, message: r.message } : { ok: true });
      };
      h.dispose = function () {
        if (h.disposed) return;
        h.disposed = true;
        if (h.id) bridge.dispose(h.id);
        else { var i = queue.indexOf(h); if (i >= 0) queue.splice(i, 1); settle({ ok: true, disposed: true }); }
      };
      if (started) h.flush(); else queue.push(h);
      return { dispose: h.dispose, declared: h.declared, get code() { return h.code; } };
    }

    // actionFns are an action definition's functions, as the module calls
    // them; their source is the action's default identity (identity).
    function actionFns(def) {
      var fns = { run: def.run, available: typeof def.available === "function" ? def.available : undefined };
      if (def.available !== undefined && typeof def.available !== "function") {
        var a = def.available;
        fns.available = function () { return a; };
      }
      if (def.expect && typeof def.expect.predicate === "function") fns.predicate = def.expect.predicate;
      // handoff.result: the value, read once the person is done.
      if (def.handoff && def.handoff.result) fns.handoffResult = def.handoff.result;
      if (Array.isArray(def.steps)) {
        fns.steps = def.steps.map(function (s) { return s.run; });
        fns.stepPredicates = def.steps.map(function (s) { return s.expect && s.expect.predicate; });
      }
      return fns;
    }

    function action(def) {
      var spec = {}, k;
      for (k in def) if (typeof def[k] !== "function") spec[k] = def[k];
      var fns = actionFns(def);
      if (fns.predicate) { spec.expect = Object.assign({}, def.expect); delete spec.expect.predicate; }
      if (Array.isArray(def.steps)) {
        spec.steps = def.steps.map(function (s) {
          var e = s.expect && Object.assign({}, s.expect);
          if (e) delete e.predicate;
          return { title: s.title, expect: e };
        });
      }
      // approval: true, (input, record) => true | false | "reason", or
      // {when, summary}: the functions go to the module, the spec says
      // approval (docs/page-api.md §2.1).
      var ap = def.approval;
      if (typeof ap === "function" || (ap && typeof ap === "object")) {
        spec.approval = true;
        fns.approvalFor = typeof ap === "function" ? ap : ap.when;
        fns.approvalSummary = ap.summary;
      }
      if (def.params && typeof def.params === "object") fns.paramOrder = Object.keys(def.params);
      if (def.handoff === true) spec.handoff = { prompt: def.title };
      else if (typeof def.handoff === "string") spec.handoff = { prompt: def.handoff };
      delete spec.run; delete spec.available;
      if (spec.identity === undefined) spec.identity = identity(fns);
      fns.run = failing(fns.run);
      fns.handoffResult = failing(fns.handoffResult);
      if (fns.steps) fns.steps = fns.steps.map(failing);
      return declare("action", spec, fns);
    }

    // failing makes a thrown or rejected pling.Failure the handler's
    // returned failure, which the module reads (docs/page-api.md §2.9).
    function failing(f) {
      if (typeof f !== "function") return f;
      function caught(e) { if (e instanceof Failure) return e; throw e; }
      return function () {
        var r;
        try { r = f.apply(this, arguments); } catch (e) { return caught(e); }
        // Promise.resolve adopts a page's own thenable as the module does:
        // its first settlement wins.
        return r && typeof r.then === "function" ? Promise.resolve(r).then(undefined, caught) : r;
      };
    }

    function parse(res) {
      return typeof res === "string" ? JSON.parse(res) : res;
    }

    // seen shows every response to the watchers (the WebMCP mirror).
    function seen(res) {
      watchers.forEach(function (f) { try { f(res); } catch (e) { /* a watcher never breaks a call */ } });
      return res;
    }

    var api = {
      action: action,
      Failure: Failure,
      fail: function (code, message, details) { return new Failure(code, message, details); },
      state: function (key, read, opts) {
        var spec = Object.assign({ key: key }, opts || {});
        if (spec.identity === undefined) spec.identity = String(read);
        return declare("state", spec, { read: read });
      },
      guide: function (target, label) {
        var spec = typeof target === "object" ? target : Object.assign({ target: target }, typeof label === "object" ? label : { label: label });
        return declare("guide", spec, {});
      },
      region: function (def) {
        var spec = { id: def.id, title: def.title, modal: !!def.modal, markup: def.markup };
        var act = def.active;
        return declare("region", spec, { active: typeof act === "function" ? act : act === undefined ? undefined : function () { return act; } });
      },
      records: function (kind, rows) {
        return declare("records", { kind: kind }, { read: typeof rows === "function" ? rows : function () { return rows; } });
      },
      hook: function (def) { return declare("hook", {}, { before: def.before, after: def.after }); },
      configure: function (c) {
        if (loading) throw new Error("pling.configure: the configuration is fixed once the module starts");
        var hk = ["handoff", "approve", "page", "feedback", "waiting"];
        // undo holds what this call replaced, so dispose can put it back.
        var undo = [];
        function set(obj, k, v, del) {
          undo.push({ obj: obj, k: k, had: Object.prototype.hasOwnProperty.call(obj, k), old: obj[k], now: v, del: del });
          if (del) delete obj[k]; else obj[k] = v;
        }
        hk.forEach(function (k) {
          if (typeof c[k] === "function") set(hooks, k, c[k]);
          else if (k in c && !c[k]) set(hooks, k, undefined, true); // false or null: no default either
        });
        for (var k in c) {
          if (LOADER.indexOf(k) >= 0) set(loader, k, c[k]);
          else if (hk.indexOf(k) < 0) set(config, k, c[k]);
        }
        configured = true;
        configs++;
        var disposed = false;
        // dispose withdraws this configuration while the module has not
        // started: each value it set that no later configure replaced goes
        // back to what it was. Once the module starts the configuration
        // is fixed, and dispose changes nothing.
        return { dispose: function () {
          if (disposed || loading) return;
          disposed = true;
          undo.reverse().forEach(function (u) {
            var cur = Object.prototype.hasOwnProperty.call(u.obj, u.k);
            if (u.del ? cur : (!cur || u.obj[u.k] !== u.now)) return; // changed since
            if (u.had) u.obj[u.k] = u.old; else delete u.obj[u.k];
          });
          configured = --configs > 0;
        } };
      },
      load: start,
      // check() → a promise of every mistake the page's author should fix:
      // the declarations refused or in conflict so far, and what the
      // module finds across them (pagebridge.Lint; docs/page-api.md §2.10).
      check: function () {
        return start().then(function () { return bridge.lint(); }).then(parse);
      },
      surface: {
        // w: how long the caller waits for the answer (ms; the WebMCP
        // mirror's window): an approval the invoke asks for lapses with it.
        handle: function (req, w) {
          // Text, or its exact bytes as a Uint8Array; anything else is a request object.
          var text = typeof req === "string" || req instanceof Uint8Array ? req : JSON.stringify(req);
          // Called without a this: one JS value less for Go to take in.
          // api._forms (markup) first reads the declared forms' values
          // again: what a form holds now is what this answer says.
          return start().then(function () { var h = bridge.handle; if (api._forms) api._forms(); return h(text, w); }).then(parse).then(seen);
        },
        // cancel(id, session) → Promise<boolean>: stop the invoke in flight
        // under that id and session token, the call an agent gave up on.
        // true: it had not run and never will (its answer says cancelled).
        cancel: function (id, session) {
          return start().then(function () { return bridge.cancel(String(id), session || ""); });
        }
      },
      tools: function (session) {
        return start().then(function () { return bridge.tools(session || ""); }).then(parse);
      },
      callTool: function (name, args, session) {
        return start().then(function () { return bridge.callTool(session || "", name, args === undefined ? "" : String(args)); }).then(parse).then(seen);
      }
    };
    Object.defineProperty(api, "ready", { get: start, enumerable: true });
    Object.defineProperty(api, "configured", { get: function () { return configured; } });
    // _identity is the default identity of an action definition, the one
    // rule for every wrapper (react.mjs) that declares through its own
    // functions.
    Object.defineProperty(api, "_identity", { value: function (def) { return identity(actionFns(def)); } });
    Object.defineProperty(api, "_watch", { value: function (f) { watchers.push(f); } });
    // For the WebMCP mirror, before the module starts: the configuration
    // and the declarations queued (null once it started).
    Object.defineProperty(api, "_pending", { get: function () { return loading ? null : { config: config, decls: queue.slice() }; } });
    // For the WebMCP mirror: an invoke under the caller's id (so that
    // surface.cancel can reach it), and its response written for a model.
    Object.defineProperty(api, "_invoke", { value: function (capability, input, id, w) {
      return start().then(function () {
        return api.surface.handle({ protocol: bridge.version, id: id, method: "invoke", capability: capability, input: input || {} }, w);
      });
    } });
    Object.defineProperty(api, "_toolText", { value: function (res) {
      return start().then(function () { return bridge.toolText(typeof res === "string" ? res : JSON.stringify(res)); });
    } });
    return api;
  }

  // Failure is a handler's business failure: return pling.fail(…) or
  // throw new pling.Failure(…) (docs/page-api.md §2.9).
  function Failure(code, message, details) { this.code = code; this.message = message; this.details = details; }
  Failure.prototype = Object.create(Error.prototype, { __plingFailure: { value: true } });

  var LOADER = ["assets", "wasm", "wasmExec", "ui", "webmcpSrc", "wasmIntegrity", "wasmExecIntegrity"];

  // adopt replays, in order, the calls a page made on the stub (stub.js,
  // docs/page-api.md §1.2) before this file ran, and hands each its real
  // handle; a stub whose ready was read gets this pling's ready.
  function adopt(api, pre) {
    if (!pre || !Array.isArray(pre.q)) return;
    pre.q.splice(0).forEach(function (c) {
      var h;
      try { h = api[c.m].apply(api, c.a); } catch (e) {
        if (root.console) console.error("pling." + c.m + ": " + e.message);
        h = { dispose: function () {}, declared: Promise.resolve({ ok: false, error: e.message }) };
      }
      c.h = h;
      c.r(h);
    });
    if (pre.w) pre.w(api.ready);
  }

  if (typeof module === "object" && module.exports) {
    module.exports = { createPling: createPling, adopt: adopt, cut: cut };
    // Bundled into a page (a bundler's CommonJS wrapper): the page's pling too.
    if (root.window !== root) return;
  }
  if (!root.document) return;

  // The built-ins the approval path needs, taken now, before a later page
  // script can patch them (RATIONALE "Why does pling.js keep its own
  // copies of built-ins?"): ui.js is loaded, handed these and heard from
  // through them only, never through a global a page script can replace.
  // A script that ran before this file could have patched them already;
  // docs/page-api.md §4 says what in-page approval cannot resist.
  // Where one is missing (a test's stand-in document), the default UI
  // cannot load and an approval is denied.
  var apply = Reflect.apply, P = Promise, pthen = P.prototype.then, define = Object.defineProperty, own = Object.getOwnPropertyDescriptor;
  var listen, createEl, append, headOf, currentOf, setSrc, isTrusted, formAction;
  try {
    var DP = Document.prototype;
    listen = EventTarget.prototype.addEventListener; createEl = DP.createElement; append = Node.prototype.appendChild;
    headOf = own(DP, "head").get; currentOf = own(DP, "currentScript").get; setSrc = own(HTMLScriptElement.prototype, "src").set;
    // isTrusted is an own, unforgeable property of each event (not on
    // Event.prototype in Chromium); its getter refuses anything not a
    // real Event, so a made-up {isTrusted: true} reads as untrusted.
    isTrusted = (own(new Event("pling"), "isTrusted") || own(Event.prototype, "isTrusted")).get;
    // A form's action, resolved (a field named "action" cannot stand in).
    formAction = own(HTMLFormElement.prototype, "action").get;
  } catch (e) { /* no DOM built-ins here */ }
  var kit = {
    listen: function (el, type, f) { apply(listen, el, [type, f]); },
    trusted: function (e) { try { return apply(isTrusted, e, []) === true; } catch (x) { return false; } },
    Promise: P
  };

  // In a page: the script tag says where the module is and what to expose.
  // Loaded as an ES module (the npm package's entry) there is no script
  // tag: files are looked for under /pling/ unless configure({assets}) or
  // a data-assets attribute says where they are served.
  var script = document.currentScript;
  var data = (script && script.dataset) || {};
  var loader = {};
  LOADER.forEach(function (k) { loader[k] = data[k]; });
  function asset(name, key) {
    if (loader[key]) return loader[key];
    var base = loader.assets || (script ? script.src.replace(/[^/]*$/, "") : "/pling/");
    return base.replace(/\/?$/, "/") + name;
  }
  var defaults = {
    expose: (data.expose || "").split(/[\s,]+/).filter(Boolean),
    origin: location.origin
  };
  // data-anonymous: what a caller without a session may reach (present but
  // empty: nothing; absent: the runtime's default, RATIONALE.md).
  if (data.anonymous !== undefined) defaults.anonymous = data.anonymous.split(/[\s,]+/).filter(Boolean);
  // data-authority: the delegation authority the page follows (its keys,
  // revocations and shared replay guard; docs/authority.md).
  if (data.authority) defaults.authority = data.authority;
  // data-approvals="authority": a person approves on the authority's screen,
  // not in the page; the module accepts only the approval the authority
  // signed (docs/page-api.md §4.2).
  if (data.approvals) defaults.approvals = data.approvals;
  // integrity (Subresource Integrity, sha384-…) makes the browser refuse
  // other bytes; it needs CORS, which plinghttp and pling serve send.
  function loadScript(src, integrity) {
    return new Promise(function (ok, fail) {
      var s = document.createElement("script");
      if (integrity) { s.integrity = integrity; s.crossOrigin = "anonymous"; }
      s.src = src; s.onload = ok; s.onerror = function () { fail(new Error("pling: cannot load " + src)); };
      document.head.appendChild(s);
    });
  }
  function load() {
    uiSrc = asset("ui.js", "ui"); // fixed when the module starts, like the configuration
    return (root.Go ? Promise.resolve() : loadScript(asset("wasm_exec.js", "wasmExec"), loader.wasmExecIntegrity)).then(function () {
      var go = new root.Go();
      var ready = new Promise(function (ok) { root.__plingReady = ok; });
      var src = asset("pling.wasm", "wasm"), opts = loader.wasmIntegrity ? { integrity: loader.wasmIntegrity } : undefined;
      var inst = WebAssembly.instantiateStreaming
        ? WebAssembly.instantiateStreaming(fetch(src, opts), go.importObject)
        : fetch(src, opts).then(function (r) { return r.arrayBuffer(); }).then(function (b) { return WebAssembly.instantiate(b, go.importObject); });
      return inst.then(function (r) { go.run(r.instance); return ready; });
    });
  }
  // UC marks the site's user content: pling.js declares nothing from
  // markup inside it, nor reads its role=alert (docs/markup.md).
  var UC = "[data-pling-user-content]";
  function visible(el) { return !!(el.offsetParent || el.getClientRects().length); }
  // The default handoff and approval UI (ui.js) is loaded the first time
  // one is shown. If it cannot load, the answer is cancel / deny: a person
  // who cannot be asked has not agreed.
  var ui = null, uiSrc = "", uiEl = null, uiWaiting = null;
  function uiLoaded(u) {
    var w = uiWaiting, i;
    uiWaiting = null;
    uiEl = null;
    ui = u;
    for (i = 0; w && i < w.n; i++) w[i](u);
  }
  // __plingUIDefine(make) is how ui.js hands over its UI: accepted once,
  // and only while the <script> this file inserted runs (the real
  // currentScript), so a page script cannot pose as ui.js.
  try {
    define(root, "__plingUIDefine", { __proto__: null, value: function (make) {
      var cur = null;
      try { cur = apply(currentOf, document, []); } catch (e) { /* no current script */ }
      if (!uiEl || cur !== uiEl || ui) return;
      uiLoaded(make(kit));
    } });
  } catch (e) { /* defined before this file ran: the default UI answers no */ }
  function loadUI(then) {
    if (ui) return then(ui);
    if (!isTrusted || !setSrc) return then(null);
    if (uiWaiting) { uiWaiting[uiWaiting.n++] = then; return; }
    uiWaiting = { __proto__: null, n: 1, 0: then };
    var s = uiEl = apply(createEl, document, ["script"]);
    function failed() { // an error, or loaded without calling __plingUIDefine
      if (!uiWaiting) return;
      if (root.console) console.error("pling: cannot load " + uiSrc);
      uiLoaded(null);
    }
    apply(listen, s, ["error", failed]);
    apply(listen, s, ["load", failed]);
    apply(setSrc, s, [uiSrc]);
    apply(append, apply(headOf, document, []), [s]);
  }
  // The default handoff and approval UI (ui.js) is loaded the first time
  // one is shown. If it cannot load, the answer is cancel / deny: a person
  // who cannot be asked has not agreed. The answer is a promise of this
  // file's own Promise with its own then, and a decision is an object
  // without a prototype, so no patched then, toJSON or setter sees or
  // makes one.
  function overlay(kind) {
    return function (req, signal) {
      var p = new P(function (ok) {
        loadUI(function (u) {
          // The call ended (a cancel, a timeout) while ui.js was loading:
          // no dialog for a call that is over.
          if (u && !(signal && signal.aborted)) u[kind](req, signal, ok);
          else ok(kind === "approve" ? { __proto__: null, binding: req.binding, approved: false } : "cancel");
        });
      });
      define(p, "then", { __proto__: null, value: pthen });
      return p;
    };
  }
  var pling = createPling(load, defaults, {
    handoff: overlay("handoff"),
    approve: overlay("approve"),
    // A person is asked for an invoke: "pling:waiting" on window, detail
    // {id, capability, kind, timeoutMs}, so an agent's transport waits as
    // long as the page does.
    waiting: function (w) { root.dispatchEvent(new CustomEvent("pling:waiting", { detail: w })); },
    page: function () { return { url: location.href, title: document.title }; },
    // Errors the page shows to the person (role=alert) are the agent's
    // feedback too; data-pling-level overrides "error". Never from the
    // site's user content (UC): a user's words are not the page's.
    feedback: function () {
      var out = [];
      document.querySelectorAll("[role=alert]").forEach(function (el) {
        var m = !el.closest(UC) && visible(el) && el.textContent.trim();
        if (m) out.push({ level: el.getAttribute("data-pling-level") || "error", message: cut(m, 500) });
      });
      return out;
    }
  }, loader, data);
  var pre = root.pling;
  root.pling = pling;
  adopt(pling, pre);
  if (data.markup !== "off") markup(pling, document);
  if (data.eager !== undefined) pling.load();
  // A development origin (or data-pling-dev) lists the page's mistakes
  // on the console (docs/page-api.md §2.10) once the page is idle 10 s
  // after its load: a visit fetches no module for it before then, and a
  // module an agent's call started is not fetched again.
  if (data.plingDev !== "off" && (data.plingDev !== undefined || /^(localhost|127\.0\.0\.1|\[::1\])$/.test(location.hostname))) {
    root.addEventListener("load", function () {
      setTimeout(function () {
        (root.requestIdleCallback || setTimeout)(function () {
          pling.check().then(function (ps) { if (ps.length) console.warn("pling: mistakes:\n" + ps.join("\n")); });
        });
      }, 1e4);
    });
  }

  // WebMCP: where the browser (or a polyfill) offers a model context, the
  // exposed capabilities are mirrored there as tools (webmcp.js).
  var mirrored = data.webmcp === "off";
  function mirrorOn() { return data.webmcp !== "off" && !!(document.modelContext || navigator.modelContext); }
  // A plain tag read while the page parses writes webmcp.js in after
  // itself, a script the parser waits for, so the tools are registered
  // before DOMContentLoaded, when consumers that wait for it look; it
  // carries the tag's CSP nonce, as 'strict-dynamic' trusts no written
  // script. From an async or inserted tag, or once the page is parsed, it
  // is inserted (RATIONALE.md); at load, again if the written one did not
  // run.
  function webmcp(early) {
    if (mirrored || pling._webmcp || !mirrorOn()) return;
    var src = asset("webmcp.js", "webmcpSrc"), w;
    if (early === 1 && document.readyState == "loading" && script && script.src && !script.async) {
      w = document.createElement("script");
      w.src = src;
      if (script.nonce) w.setAttribute("nonce", script.nonce);
      return document.write(w.outerHTML);
    }
    mirrored = true;
    loadScript(src).catch(function (e) { if (root.console) console.error(e.message); });
  }
  webmcp(1);
  root.addEventListener("load", webmcp);

  // Declarative markup: data-pling-action on buttons and forms (with
  // data-pling-param inputs), data-pling-state, data-pling-guide,
  // data-pling-region. Every attribute is untrusted: the runtime validates
  // what it declares. A MutationObserver keeps declarations in sync; it
  // watches only elements and data-pling-* attributes, never text, so a
  // text edit costs nothing here.
  function markup(pling, doc) {
    var SEL = "[data-pling-action],[data-pling-state],[data-pling-guide],[data-pling-region],form[toolname],form[data-pling-toolname]";
    var live = new Map();
    // moved: the WebMCP forms whose toolname this file moved to
    // data-pling-toolname; that attribute, written by anyone else, is
    // not honoured.
    var moved = new WeakMap();
    // said: each declared form's params as last read (JSON), for _forms.
    var said = new WeakMap();
    function attr(el, n) { return el.getAttribute("data-pling-" + n); }
    // where: what the module needs to judge a markup declaration (a
    // short selector path for the author, inside user content or not) and,
    // for a form or the submit button of one, where it would send its
    // fields: the button's formaction, else the form's action, read with
    // HTMLFormElement's own getter (a field named "action" is not it).
    function where(el) {
      for (var p = [], n = el, i, x; n && n.nodeType === 1 && p.length < 5; n = n.parentElement) {
        if (n.id) { p.unshift(n.localName + "#" + n.id); break; }
        for (i = 1, x = n; (x = x.previousElementSibling);) if (x.localName === n.localName) i++;
        p.unshift(n.localName + (i > 1 ? ":nth-of-type(" + i + ")" : ""));
      }
      var m = { path: p.join(" > "), userContent: !!el.closest(UC) || undefined };
      var f = el.tagName === "FORM" ? el : el.type === "submit" && el.form;
      if (f) {
        m.submitTo = el !== f && el.getAttribute("formaction") ? el.formAction : formAction ? apply(formAction, f, []) : f.action;
        m.submitTarget = el.getAttribute("formtarget") || f.getAttribute("target") || undefined;
      }
      return m;
    }
    // guard runs go (an agent's click or submit) and stops, before
    // anything is sent, every form submission it causes that would leave
    // the page's origin or window: the module refused such forms when
    // they were declared, and this holds for one changed since, or one a
    // click reaches another way (a label, a button's form attribute).
    function guard(go) {
      var no;
      function on(e) {
        var m = where(e.submitter || e.target);
        if (m.submitTo && (new URL(m.submitTo).origin !== location.origin || m.submitTarget && !/^_self$/i.test(m.submitTarget))) {
          e.preventDefault();
          e.stopImmediatePropagation();
          no = new Failure("PERMISSION_DENIED", "The form would send to another origin or window; nothing was sent");
        }
      }
      doc.addEventListener("submit", on, true);
      try { go(); } finally { doc.removeEventListener("submit", on, true); }
      return no;
    }
    // text: a label's own words (not a <select>'s options); a control's
    // value when the form is declared is its param's default, and the
    // param is then optional; radios of one name are one enum param
    // (docs/markup.md, RATIONALE).
    function text(n) {
      if (!n) return "";
      n = n.cloneNode(true);
      n.querySelectorAll("select,input,textarea,button").forEach(function (x) { x.remove(); });
      return n.textContent.trim();
    }
    function named(d, vs, ns) {
      return ns.some(function (t, k) { return t && t !== vs[k]; }) ? (d ? d + ". " : "") + "Options: " + vs.map(function (v, k) {
        return JSON.stringify(v) + (ns[k] && ns[k] !== v ? " (" + ns[k] + ")" : "");
      }).join(", ") : d;
    }
    // A WebMCP declarative form (toolname) takes every named field, as
    // the standard does; a Pling form, its data-pling-param fields.
    function fields(form) {
      return form.querySelectorAll(form.hasAttribute("data-pling-action") ? "[data-pling-param]" : "input[name],select[name],textarea[name]");
    }
    function params(form) {
      var ps = {}, rs = {};
      fields(form).forEach(function (i) {
        if (!i.hasAttribute("data-pling-param") && (i.type === "submit" || i.type === "button" || i.type === "hidden")) return;
        var name = attr(i, "param") || i.name, p = { type: "string" }, t = i.type, v = i.value, ns = [], g, d;
        if (!name) return;
        if (t === "radio") {
          g = rs[name] || (rs[name] = ps[name] = { type: "string", enum: [], n: [] });
          g.enum.push(v); g.n.push(text(i.labels && i.labels[0]));
          if (i.required) g.r = 1;
          if (i.checked) g.default = v;
          d = i.closest("fieldset,[role=radiogroup]");
          g.d = g.d || attr(i, "description") || (d && (text(d.querySelector("legend")) || d.getAttribute("aria-label")));
          return;
        }
        // A number's step is 1 unless it says otherwise, counted from
        // its min: whole numbers unless either has a fraction (or "any").
        if (t === "number" || t === "range") p.type = /\.|any/.test(i.step + i.min) ? "number" : "integer";
        if (t === "checkbox") p.type = "boolean";
        if (i.min !== "" && i.min !== undefined && p.type !== "string") p.minimum = +i.min;
        if (i.max !== "" && i.max !== undefined && p.type !== "string") p.maximum = +i.max;
        if (i.minLength > 0) p.minLength = i.minLength;
        if (i.maxLength > 0) p.maxLength = i.maxLength;
        if (i.pattern) p.pattern = "^(?:" + i.pattern + ")$";
        d = attr(i, "description") || i.getAttribute("toolparamdescription") || text(i.labels && i.labels[0]);
        if (i.title) d = (d ? d + ". " : "") + i.title;
        // A required select's "" option is its placeholder, which the
        // browser refuses: not an allowed value.
        if (i.tagName === "SELECT") d = named(d, p.enum = [].filter.call(i.options, function (o) { return o.value || !i.required; }).map(function (o) { ns.push(o.text); return o.value; }), ns);
        // A secret's value (a password, a card, a one-time code: its type
        // or autocomplete says so) is never a default: it would reach
        // the agent. Secret by the same signs as the agent's secretOf
        // (agent/cdp/view.go; TestShimSecretFieldIsSecretOf).
        if (t === "checkbox") { if (i.checked) p.default = true; } else if (v !== "" && !(i.localName == "input" && /^\s*password\s*$/i.test(i.getAttribute("type")) || /(^|\s)(cc-|((current|new)-password|one-time-code)(\s|$))/i.test(i.getAttribute("autocomplete"))) && (p.type === "string" || isFinite(+v))) p.default = p.type === "string" ? v : +v;
        if (i.required && !("default" in p)) p.required = true;
        if (d) p.description = d;
        ps[name] = p;
      });
      for (var n in rs) {
        var g = rs[n], d = named(g.d, g.enum, g.n);
        if (d) g.description = d;
        if (g.r && !("default" in g)) g.required = true;
        delete g.n; delete g.r; delete g.d;
      }
      said.set(form, JSON.stringify(ps));
      return ps;
    }
    function fire(i) { ["input", "change"].forEach(function (e) { i.dispatchEvent(new Event(e, { bubbles: true })); }); }
    // fill writes what the call gave; a field it left out (its default)
    // keeps the page's value; a radio is checked, its value never written.
    // It returns, per field, what it held before and after, for back.
    function fill(form, input, ps) {
      var was = [].map.call(fields(form), function (i) { return [i, i.value, i.checked]; });
      fields(form).forEach(function (i) {
        var name = attr(i, "param") || i.name;
        if (!(name in input) || ps && ps[name] && ps[name].default === input[name]) return;
        if (i.type === "radio") { if (i.value === String(input[name]) && !i.checked) { i.checked = true; fire(i); } return; }
        if (i.type === "checkbox") i.checked = !!input[name]; else i.value = String(input[name]);
        fire(i);
      });
      was.forEach(function (w) { w.push(w[0].value, w[0].checked); });
      return was;
    }
    // back gives each field the call changed what the person had in it;
    // one changed since (the person typed while the page checked) keeps
    // what it has now.
    function back(was) {
      was.forEach(function (w) { var i = w[0]; if (i.value === w[3] && i.checked === w[4] && (i.value !== w[1] || i.checked !== w[2])) { i.value = w[1]; i.checked = w[2]; fire(i); } });
    }
    // refused is the failure of a form whose submit the browser's own
    // checks (or the page's setCustomValidity) would block; after the
    // page's submit handler (custom), of the fields the page itself named
    // with setCustomValidity. The module reads each such field's name and
    // message from a copy taken here, shaped as the form it reads
    // (wasm/formvalidity.go), because the fields then get back what the
    // person had in them (was, from fill): a refused call leaves nothing
    // of the agent's in the form, and no bubble shows the person a
    // message about a value that is gone.
    function refused(form, was, custom) {
      if (!custom && form.checkValidity()) return;
      var bad = [].filter.call(form.elements, function (e) { return e.willValidate && !e.validity.valid && (!custom || e.validity.customError); });
      if (!bad.length) return;
      var f = new Failure("INVALID_PARAMS", "", { tagName: "FORM", elements: bad.map(function (e) {
        return { name: attr(e, "param") || e.name, validationMessage: e.validationMessage, validity: { valid: false } };
      }) });
      back(was);
      return f;
    }
    // submitAsAgent submits a WebMCP declarative form the way the browser
    // does for an agent: the submit event says agentInvoked, and what the
    // page passes to respondWith is the action's value.
    function submitAsAgent(form) {
      var responded = null;
      function on(e) {
        if (e.target !== form) return;
        try {
          Object.defineProperty(e, "agentInvoked", { value: true });
          Object.defineProperty(e, "respondWith", { value: function (p) { responded = Promise.resolve(p); } });
        } catch (x) { /* a browser whose own event refuses: the page sees a plain submit */ }
      }
      doc.addEventListener("submit", on, true);
      try { form.requestSubmit(); } finally { doc.removeEventListener("submit", on, true); }
      return responded || true;
    }
    // toolForm adopts a WebMCP declarative form (<form toolname
    // tooldescription [toolautosubmit]>) as a Pling action under the tool's
    // name: the gate, validation and evidence apply. Where the mirror runs,
    // the browser's own declarative tool is withdrawn (toolname moves to
    // data-pling-toolname) so that the capability shows once. A form
    // without toolautosubmit, which WebMCP leaves for the person to send,
    // needs the person's approval here.
    function toolForm(el) {
      var name = el.getAttribute("toolname") || moved.get(el);
      if (mirrorOn() && el.hasAttribute("toolname")) {
        moved.set(el, name);
        el.setAttribute("data-pling-toolname", name);
        el.removeAttribute("toolname");
      }
      // Its title is the form's tooltitle, as WebMCP reads it; without
      // one it is the tool's name (as the runtime titles any action
      // without one, which pling mcp does not repeat), never words taken
      // from the description.
      return pling.action({
        id: name, title: el.getAttribute("tooltitle") || name,
        description: el.getAttribute("tooldescription") || undefined, identity: "markup", params: params(el),
        approval: !el.hasAttribute("toolautosubmit"), markup: where(el),
        available: function () { return visible(el) || "It is not visible on the page"; },
        // The page refuses in its submit handler by naming a field
        // (setCustomValidity, then rejecting respondWith or not calling
        // it), by rejecting respondWith or by answering it with a
        // pling.fail; either way the person's values go back, and a
        // rejection that names no field is the page's failure as it gave
        // it. While the page checks, the form holds the agent's values:
        // _forms does not take them for its defaults (no said).
        run: function (input) {
          var r, s = said.get(el), was = fill(el, input);
          return refused(el, was) || guard(function () { r = submitAsAgent(el); }) || (said.delete(el), Promise.resolve(r).finally(function () { said.set(el, s); }).then(function (v) { return refused(el, was, 1) || v instanceof Failure && back(was) || v; }, function (x) { return refused(el, was, 1) || back(was) || Promise.reject(x); }));
        }
      });
    }
    function declare(el) {
      if (el.tagName === "FORM" && !el.hasAttribute("data-pling-action") && (el.hasAttribute("toolname") || moved.has(el))) return [toolForm(el)];
      var hs = [], a = attr(el, "action"), s = attr(el, "state"), g = attr(el, "guide"), r = attr(el, "region"), m = where(el);
      // data-pling-record is KIND:ID: kinds have no ':', ids may, so the
      // kind ends at the first ':'. Anything else declares no action (as a
      // plain capability it would fold every row into one).
      var rec = attr(el, "record"), colon = rec === null ? -1 : rec.indexOf(":");
      if (a && rec !== null && (colon < 1 || colon === rec.length - 1)) {
        if (root.console) console.warn("pling: data-pling-action \"" + cut(a, 128) + "\": data-pling-record must be KIND:ID; the action is not declared");
        a = null;
      }
      if (a) {
        var isForm = el.tagName === "FORM";
        var def = {
          id: a, title: attr(el, "title") || el.getAttribute("aria-label") || cut((el.textContent || "").trim(), 200) || a,
          description: attr(el, "description") || undefined,
          risk: attr(el, "risk") || undefined,
          region: attr(el, "in-region") || undefined,
          identity: "markup", markup: m,
          available: function () { return el.disabled ? "It is disabled on the page" : visible(el) || "It is not visible on the page"; },
          // A form's submit handler may refuse by naming a field
          // (setCustomValidity) as it runs: that is the page's answer,
          // and the person's values go back.
          run: function (input) {
            if (isForm) { var was = fill(el, input, ps), f = refused(el, was); if (f) return f; }
            return guard(function () { isForm ? el.requestSubmit() : el.click(); }) || isForm && refused(el, was, 1) || true;
          }
        };
        // Defaults are applied before run: a value equal to its default
        // was left out (or repeats it), and the page's own value stays.
        var ps = isForm ? params(el) : null;
        if (isForm) def.params = ps;
        if (rec !== null) def.record = { kind: rec.slice(0, colon), id: rec.slice(colon + 1) };
        var st = attr(el, "expect-state");
        if (st) def.expect = { state: st, change: attr(el, "expect-change") || "any" };
        hs.push(pling.action(def));
      }
      if (s) hs.push(pling.state(s, function () {
        return "value" in el && el.tagName !== "BUTTON" ? (el.type === "checkbox" ? el.checked : el.value) : (el.textContent || "").trim();
      }, { identity: "markup", markup: m }));
      if (g) hs.push(pling.guide({ target: g, label: attr(el, "label") || el.getAttribute("aria-label") || cut((el.textContent || "").trim(), 200), identity: "markup", markup: m }));
      if (r) hs.push(pling.region({
        id: r, title: attr(el, "title") || el.getAttribute("aria-label") || r, modal: el.hasAttribute("data-pling-modal"), markup: m,
        active: function () { return el.tagName === "DIALOG" ? el.open : visible(el); }
      }));
      return hs;
    }
    function add(el) { drop(el); live.set(el, declare(el)); }
    // A page's script may fill a form after DOMContentLoaded (from its
    // own fetch), which no observer sees: before each describe and call
    // (surface.handle) every declared form's params are read again, and
    // a form whose values (its defaults) changed is declared again; not
    // one whose call waits for the page's check (toolForm takes its said
    // away meanwhile): it holds the agent's values, not its defaults.
    pling._forms = function () {
      var a = [];
      live.forEach(function (_, el) { var was = said.get(el); if (was && was !== JSON.stringify(params(el))) a.push(el); });
      a.forEach(add);
      return a.length;
    };
    function drop(el) { var hs = live.get(el); if (hs) { hs.forEach(function (h) { h.dispose(); }); live.delete(el); } }
    function scan(node) {
      if (node.nodeType !== 1) return;
      if (node.matches(SEL)) add(node);
      node.querySelectorAll(SEL).forEach(add);
    }
    function start() {
      scan(doc.documentElement);
      new MutationObserver(function (ms) {
        ms.forEach(function (m) {
          // The mark put on (or taken off) an element that holds
          // declarations already: each is declared again, as it now sits.
          if (m.type === "attributes") { if (m.attributeName === "data-pling-user-content") scan(m.target); else if (m.target.matches(SEL)) add(m.target); else drop(m.target); return; }
          m.removedNodes.forEach(function (n) {
            if (n.nodeType !== 1) return;
            live.forEach(function (_, el) { if (n === el || n.contains(el)) drop(el); });
          });
          m.addedNodes.forEach(scan);
        });
      }).observe(doc.documentElement, {
        childList: true, subtree: true, attributes: true,
        attributeFilter: ["data-pling-action", "data-pling-state", "data-pling-guide", "data-pling-region", "data-pling-title", "data-pling-record", "data-pling-label", "data-pling-modal", "data-pling-user-content"]
      });
    }
    // Read again at DOMContentLoaded, after the page's own deferred
    // scripts: they prefill forms, and a control's value then is its
    // param's default. A deferred pling.js runs before them.
    if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", start); else { start(); doc.addEventListener("DOMContentLoaded", function () { scan(doc.documentElement); }); }
  }
})(typeof globalThis !== "undefined" ? globalThis : this);
