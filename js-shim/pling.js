/* Pling page shim: window.pling, declarations queued until the module is
 * ready, the module loaded lazily, declarative data-pling-* markup kept in
 * sync. The logic lives in Go (pling.wasm); this file only carries values
 * across. PLING.md §4.3. */
(function (root) {
  "use strict";

  // createPling builds a pling object. load() must resolve to the module's
  // bridge (globalThis.__plingBridge once the Go module has started).
  function createPling(load, defaults) {
    var bridge = null, loading = null, configured = false, started = false;
    var config = Object.assign({ expose: [] }, defaults || {});
    var hooks = {};
    var queue = [];

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
      var h = { id: 0, disposed: false }, settle;
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
        ["handoff", "approve", "page", "feedback"].forEach(function (k) {
          if (typeof c[k] === "function") { hooks[k] = c[k]; }
        });
        for (var k in c) if (typeof c[k] !== "function") config[k] = c[k];
        configured = true;
        return { dispose: function () {} };
      },
      load: start,
      surface: {
        handle: function (req) {
          var text = typeof req === "string" ? req : JSON.stringify(req);
          return start().then(function () { return bridge.handle(text); }).then(parse);
        }
      },
      tools: function (session) {
        return start().then(function () { return bridge.tools(session || ""); }).then(parse);
      },
      callTool: function (name, args, session) {
        return start().then(function () { return bridge.callTool(session || "", name, args === undefined ? "" : String(args)); }).then(parse);
      }
    };
    Object.defineProperty(api, "ready", { get: start, enumerable: true });
    Object.defineProperty(api, "configured", { get: function () { return configured; } });
    return api;
  }

  if (typeof module === "object" && module.exports) {
    module.exports = { createPling: createPling };
    return;
  }
  if (!root.document) return;

  // In a page: the script tag says where the module is and what to expose.
  var script = document.currentScript;
  var base = script ? script.src.replace(/[^/]*$/, "") : "/pling/";
  var data = (script && script.dataset) || {};
  var defaults = {
    expose: (data.expose || "").split(/[\s,]+/).filter(Boolean),
    origin: location.origin
  };
  function loadScript(src) {
    return new Promise(function (ok, fail) {
      var s = document.createElement("script");
      s.src = src; s.onload = ok; s.onerror = function () { fail(new Error("pling: cannot load " + src)); };
      document.head.appendChild(s);
    });
  }
  function load() {
    return (root.Go ? Promise.resolve() : loadScript(data.wasmExec || base + "wasm_exec.js")).then(function () {
      var go = new root.Go();
      var ready = new Promise(function (ok) { root.__plingReady = ok; });
      var src = data.wasm || base + "pling.wasm";
      var inst = WebAssembly.instantiateStreaming
        ? WebAssembly.instantiateStreaming(fetch(src), go.importObject)
        : fetch(src).then(function (r) { return r.arrayBuffer(); }).then(function (b) { return WebAssembly.instantiate(b, go.importObject); });
      return inst.then(function (r) { go.run(r.instance); return ready; });
    });
  }
  var pling = createPling(load, defaults);
  root.pling = pling;
  if (root.plingMarkup) root.plingMarkup(pling);
  if (data.eager !== undefined) pling.load();
})(typeof globalThis !== "undefined" ? globalThis : this);
