/* Pling page shim: window.pling, declarations queued until the module is
 * ready, the module loaded lazily, declarative data-pling-* markup kept in
 * sync. The logic lives in Go (pling.wasm); this file only carries values
 * across. docs/page-api.md. */
(function (root) {
  "use strict";

  // createPling builds a pling object. load() must resolve to the module's
  // bridge (globalThis.__plingBridge once the Go module has started);
  // defaultHooks are the hooks used unless the page configures its own.
  // loader holds where the page's files are served (assets, wasm,
  // wasmExec, ui, webmcpSrc): configure sets them; they stay in JS.
  function createPling(load, defaults, defaultHooks, loader) {
    loader = loader || {};
    var bridge = null, loading = null, configured = false, started = false;
    var config = Object.assign({ expose: [] }, defaults || {});
    var hooks = Object.assign({}, defaultHooks);
    var queue = [], watchers = [], warned = {};

    function start() {
      if (!loading) {
        loading = Promise.resolve().then(load).then(function (b) {
          var r = b.init(JSON.stringify(config), hooks);
          if (r && r.error) throw new Error(r.error);
          bridge = b;
          started = true;
          queue.splice(0).forEach(function (d) { d.flush(); });
          return api;
        });
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
          if (root.console) console.error("pling: " + r.error);
          return;
        }
        h.id = r.handle;
        h.code = r.code;
        if (r.unexposed && !warned[spec.id] && root.console) {
          warned[spec.id] = 1;
          console.warn("pling: action \"" + String(spec.id).slice(0, 128) + "\" is declared but not exposed: the site allowlist (data-expose, configure({expose})) is \"" +
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

    function action(def) {
      var spec = {}, k;
      for (k in def) if (typeof def[k] !== "function") spec[k] = def[k];
      var fns = { run: def.run, available: typeof def.available === "function" ? def.available : undefined };
      if (def.available !== undefined && typeof def.available !== "function") {
        var a = def.available;
        fns.available = function () { return a; };
      }
      if (def.expect && typeof def.expect.predicate === "function") {
        fns.predicate = def.expect.predicate;
        spec.expect = Object.assign({}, def.expect); delete spec.expect.predicate;
      }
      if (Array.isArray(def.steps)) {
        fns.steps = def.steps.map(function (s) { return s.run; });
        fns.stepPredicates = def.steps.map(function (s) { return s.expect && s.expect.predicate; });
        spec.steps = def.steps.map(function (s) {
          var e = s.expect && Object.assign({}, s.expect);
          if (e) delete e.predicate;
          return { title: s.title, expect: e };
        });
      }
      if (def.handoff === true) spec.handoff = { prompt: def.title };
      else if (typeof def.handoff === "string") spec.handoff = { prompt: def.handoff };
      delete spec.run; delete spec.available;
      if (spec.identity === undefined) spec.identity = identity(fns);
      return declare("action", spec, fns);
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
        var spec = { id: def.id, title: def.title, modal: !!def.modal };
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
        hk.forEach(function (k) {
          if (typeof c[k] === "function") hooks[k] = c[k];
          else if (k in c && !c[k]) delete hooks[k]; // false or null: no default either
        });
        for (var k in c) {
          if (LOADER.indexOf(k) >= 0) loader[k] = c[k];
          else if (hk.indexOf(k) < 0) config[k] = c[k];
        }
        configured = true;
        return { dispose: function () {} };
      },
      load: start,
      surface: {
        handle: function (req) {
          // Text, or its exact bytes as a Uint8Array; anything else is a request object.
          var text = typeof req === "string" || req instanceof Uint8Array ? req : JSON.stringify(req);
          // Called without a this: one JS value less for Go to take in.
          return start().then(function () { var h = bridge.handle; return h(text); }).then(parse).then(seen);
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
    Object.defineProperty(api, "_watch", { value: function (f) { watchers.push(f); } });
    // For the WebMCP mirror, before the module starts: the configuration
    // and the declarations queued (null once it started).
    Object.defineProperty(api, "_pending", { get: function () { return loading ? null : { config: config, decls: queue.slice() }; } });
    // For the WebMCP mirror: an invoke under the caller's id (so that
    // surface.cancel can reach it), and its response written for a model.
    Object.defineProperty(api, "_invoke", { value: function (capability, input, id) {
      return start().then(function () {
        return api.surface.handle({ protocol: bridge.version, id: id, method: "invoke", capability: capability, input: input || {} });
      });
    } });
    Object.defineProperty(api, "_toolText", { value: function (res) {
      return start().then(function () { return bridge.toolText(typeof res === "string" ? res : JSON.stringify(res)); });
    } });
    return api;
  }

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
    module.exports = { createPling: createPling, adopt: adopt };
    // Bundled into a page (a bundler's CommonJS wrapper): the page's pling too.
    if (root.window !== root) return;
  }
  if (!root.document) return;

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
  function visible(el) { return !!(el.offsetParent || el.getClientRects().length); }
  // The default handoff and approval UI (ui.js) is loaded the first time
  // one is shown. If it cannot load, the answer is cancel / deny: a person
  // who cannot be asked has not agreed.
  var ui = null;
  function overlay(kind) {
    return function (req, signal) {
      ui = ui || loadScript(asset("ui.js", "ui")).then(function () { return root.__plingUI; });
      return ui.then(function (u) { return u[kind](req, signal); }, function (e) {
        ui = null;
        if (root.console) console.error(e.message);
        return kind === "approve" ? { binding: req.binding, approved: false } : "cancel";
      });
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
    // feedback too; data-pling-level overrides "error".
    feedback: function () {
      var out = [];
      document.querySelectorAll("[role=alert]").forEach(function (el) {
        var m = visible(el) && el.textContent.trim();
        if (m) out.push({ level: el.getAttribute("data-pling-level") || "error", message: m.slice(0, 500) });
      });
      return out;
    }
  }, loader);
  var pre = root.pling;
  root.pling = pling;
  adopt(pling, pre);
  if (data.markup !== "off") markup(pling, document);
  if (data.eager !== undefined) pling.load();

  // WebMCP: where the browser (or a polyfill) offers a model context, the
  // exposed capabilities are mirrored there as tools (webmcp.js).
  var mirrored = data.webmcp === "off";
  function mirrorOn() { return data.webmcp !== "off" && !!(document.modelContext || navigator.modelContext); }
  function webmcp() {
    if (mirrored || !(document.modelContext || navigator.modelContext)) return;
    mirrored = true;
    loadScript(asset("webmcp.js", "webmcpSrc")).catch(function (e) { if (root.console) console.error(e.message); });
  }
  webmcp();
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
    function attr(el, n) { return el.getAttribute("data-pling-" + n); }
    // A WebMCP declarative form (toolname) takes every named field, as
    // the standard does; a Pling form, its data-pling-param fields.
    function fields(form) {
      return form.querySelectorAll(form.hasAttribute("data-pling-action") ? "[data-pling-param]" : "input[name],select[name],textarea[name]");
    }
    function params(form) {
      var ps = {};
      fields(form).forEach(function (i) {
        if (!i.hasAttribute("data-pling-param") && (i.type === "submit" || i.type === "button" || i.type === "hidden")) return;
        var name = attr(i, "param") || i.name, p = { type: "string" };
        if (!name) return;
        if (i.type === "number" || i.type === "range") p.type = i.step && i.step.indexOf(".") < 0 && i.step !== "any" ? "integer" : "number";
        if (i.type === "checkbox") p.type = "boolean";
        if (i.required) p.required = true;
        if (i.min !== "" && i.min !== undefined && p.type !== "string") p.minimum = +i.min;
        if (i.max !== "" && i.max !== undefined && p.type !== "string") p.maximum = +i.max;
        if (i.maxLength > 0) p.maxLength = i.maxLength;
        if (i.pattern) p.pattern = "^(?:" + i.pattern + ")$";
        if (i.tagName === "SELECT") p.enum = [].map.call(i.options, function (o) { return o.value; });
        var d = attr(i, "description") || i.getAttribute("toolparamdescription") || (i.labels && i.labels[0] && i.labels[0].textContent.trim());
        if (d) p.description = d;
        ps[name] = p;
      });
      return ps;
    }
    function fill(form, input) {
      fields(form).forEach(function (i) {
        var name = attr(i, "param") || i.name;
        if (!(name in input)) return;
        if (i.type === "checkbox") i.checked = !!input[name]; else i.value = String(input[name]);
        i.dispatchEvent(new Event("input", { bubbles: true }));
        i.dispatchEvent(new Event("change", { bubbles: true }));
      });
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
      try { form.requestSubmit ? form.requestSubmit() : form.submit(); } finally { doc.removeEventListener("submit", on, true); }
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
      var name = el.getAttribute("toolname") || attr(el, "toolname");
      if (mirrorOn() && el.hasAttribute("toolname")) {
        el.setAttribute("data-pling-toolname", name);
        el.removeAttribute("toolname");
      }
      var desc = el.getAttribute("tooldescription") || "";
      return pling.action({
        id: name, title: el.getAttribute("tooltitle") || desc.split(/\.\s/)[0].slice(0, 200) || name,
        description: desc || undefined, identity: "markup", params: params(el),
        approval: !el.hasAttribute("toolautosubmit"),
        available: function () { return visible(el) || "It is not visible on the page"; },
        run: function (input) { fill(el, input); return submitAsAgent(el); }
      });
    }
    function declare(el) {
      if (el.tagName === "FORM" && !el.hasAttribute("data-pling-action") && (el.hasAttribute("toolname") || el.hasAttribute("data-pling-toolname"))) return [toolForm(el)];
      var hs = [], a = attr(el, "action"), s = attr(el, "state"), g = attr(el, "guide"), r = attr(el, "region");
      // data-pling-record is KIND:ID: kinds have no ':', ids may, so the
      // kind ends at the first ':'. Anything else declares no action (as a
      // plain capability it would fold every row into one).
      var rec = attr(el, "record"), colon = rec === null ? -1 : rec.indexOf(":");
      if (a && rec !== null && (colon < 1 || colon === rec.length - 1)) {
        if (root.console) console.warn("pling: data-pling-action \"" + a.slice(0, 128) + "\": data-pling-record must be KIND:ID; the action is not declared");
        a = null;
      }
      if (a) {
        var isForm = el.tagName === "FORM";
        var def = {
          id: a, title: attr(el, "title") || el.getAttribute("aria-label") || (el.textContent || "").trim().slice(0, 200) || a,
          description: attr(el, "description") || undefined,
          risk: attr(el, "risk") || undefined,
          region: attr(el, "in-region") || undefined,
          identity: "markup",
          available: function () { return el.disabled ? "It is disabled on the page" : visible(el) || "It is not visible on the page"; },
          run: function (input) {
            if (isForm) { fill(el, input); el.requestSubmit ? el.requestSubmit() : el.submit(); } else el.click();
            return true;
          }
        };
        if (isForm) def.params = params(el);
        if (rec !== null) def.record = { kind: rec.slice(0, colon), id: rec.slice(colon + 1) };
        var st = attr(el, "expect-state");
        if (st) def.expect = { state: st, change: attr(el, "expect-change") || "any" };
        hs.push(pling.action(def));
      }
      if (s) hs.push(pling.state(s, function () {
        return "value" in el && el.tagName !== "BUTTON" ? (el.type === "checkbox" ? el.checked : el.value) : (el.textContent || "").trim();
      }, { identity: "markup" }));
      if (g) hs.push(pling.guide({ target: g, label: attr(el, "label") || el.getAttribute("aria-label") || (el.textContent || "").trim().slice(0, 200), identity: "markup" }));
      if (r) hs.push(pling.region({
        id: r, title: attr(el, "title") || el.getAttribute("aria-label") || r, modal: el.hasAttribute("data-pling-modal"),
        active: function () { return el.tagName === "DIALOG" ? el.open : visible(el); }
      }));
      return hs;
    }
    function add(el) { drop(el); live.set(el, declare(el)); }
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
          if (m.type === "attributes") { if (m.target.matches(SEL)) add(m.target); else drop(m.target); return; }
          m.removedNodes.forEach(function (n) {
            if (n.nodeType !== 1) return;
            live.forEach(function (_, el) { if (n === el || n.contains(el)) drop(el); });
          });
          m.addedNodes.forEach(scan);
        });
      }).observe(doc.documentElement, {
        childList: true, subtree: true, attributes: true,
        attributeFilter: ["data-pling-action", "data-pling-state", "data-pling-guide", "data-pling-region", "data-pling-title", "data-pling-record", "data-pling-label", "data-pling-modal"]
      });
    }
    if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", start); else start();
  }
})(typeof globalThis !== "undefined" ? globalThis : this);
