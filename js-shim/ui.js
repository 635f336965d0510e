/* Pling's default handoff and approval UI, loaded by pling.js the first
 * time one is shown, so a page pays nothing for it before an agent asks.
 *
 * A small dialog: the prompt, the time left, Done / Cancel (handoff) or
 * Approve / Deny (approval). Escape cancels or denies. It closes itself when
 * the runtime stops waiting (the signal's onabort). Its words come from the
 * module — messages(lang): the error registry's i18n keys and the ui.* keys,
 * English or Chinese by document.documentElement.lang or navigator.language.
 * A page replaces it with pling.configure({handoff, approve}).
 *
 * A handoff is not modal: the person has to act on the page (a bank's 3-D
 * Secure window, a CAPTCHA) while the agent waits. An approval is modal:
 * nothing else should happen until the person decides. It shows what the
 * decision is bound to (the record's label, every input value), as the
 * module rendered it (escaped, redacted, bounded); this file only sets
 * textContent. Approvals are shown one at a time, the rest queued with a
 * count; Approve is inert for a moment after a dialog appears; only
 * trusted events (a person's click or key) answer; and the approval lives
 * in a closed shadow root of a <pling-ui data-pling-ui=approve> element,
 * out of reach of page scripts (RATIONALE "Who can press Approve?").
 *
 * This file hands its UI to pling.js through __plingUIDefine, which
 * accepts it only while this script runs, and gets back the built-ins
 * pling.js took when it started (kit): listeners are registered and
 * events checked with those, answers go back through callbacks, and a
 * decision is an object without a prototype, so a page script that
 * patched a prototype since sees no handler and makes no answer (RATIONALE
 * "Why does pling.js keep its own copies of built-ins?"). */
(function (root) {
  "use strict";
  root.__plingUIDefine(function (kit) {
  var doc = root.document, words = {}, seq = 0;
  // INERT_MS: how long Approve stays disabled after a dialog appears, so
  // a click meant for something else (the dialog before it) cannot land
  // on it, as browsers do for permission prompts.
  var INERT_MS = 700;

  function t(key) {
    var lang = doc.documentElement.lang || (root.navigator && navigator.language) || "en";
    if (!words[lang]) {
      try { words[lang] = JSON.parse(root.__plingBridge.messages(lang)); } catch (e) { words[lang] = {}; }
    }
    return words[lang][key] || key;
  }

  var CSS =
    ".pling-ui{position:fixed;inset:auto 20px 20px auto;margin:0;width:min(380px,calc(100vw - 40px));padding:18px 20px;" +
    "border:1px solid #d0d5dd;border-radius:12px;background:#fff;color:#101828;box-shadow:0 12px 32px rgba(16,24,40,.25);" +
    "font:15px/1.45 system-ui,sans-serif;text-align:start;z-index:2147483647}" +
    ".pling-ui:focus{outline:none}.pling-ui:focus-visible{outline:3px solid #84adff}" +
    ".pling-ui[data-pling-ui=approve]{inset:0;margin:auto;height:fit-content}" +
    ".pling-ui[data-risk=destructive]{border-top:4px solid #d92d20}" +
    ".pling-ui::backdrop{background:rgba(16,24,40,.45)}" +
    ".pling-ui h2{margin:0 0 8px;font-size:16px;line-height:1.3}.pling-ui p{margin:0 0 8px}" +
    ".pling-ui .pling-ui-who{font-size:13px;color:#1f4fd6;font-weight:600}.pling-ui .pling-ui-why{color:#b42318}" +
    ".pling-ui .pling-ui-what{font-weight:600}.pling-ui .pling-ui-more{color:#475467;font-size:14px}" +
    ".pling-ui [role=timer]{font-size:13px;color:#475467;font-variant-numeric:tabular-nums}" +
    ".pling-ui[data-pling-ui=approve]{width:min(480px,calc(100vw - 40px));max-height:calc(100vh - 40px);overflow:auto}" +
    ".pling-ui dl{margin:4px 0 10px;display:grid;grid-template-columns:minmax(90px,max-content) 1fr;gap:4px 12px;font-size:14px}" +
    ".pling-ui dt{color:#475467;overflow-wrap:anywhere}.pling-ui dt span,.pling-ui dd span{color:#667085;font-size:12px}" +
    ".pling-ui dd{margin:0;font-weight:600;white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate}" +
    ".pling-ui dd span{display:block;font-weight:400}.pling-ui dd i{font-weight:400;color:#667085}" +
    ".pling-ui .pling-ui-queue{font-size:13px;color:#1f4fd6;font-weight:600}" +
    ".pling-ui button:disabled{opacity:.55;cursor:default}" +
    ".pling-ui .pling-ui-buttons{display:flex;justify-content:flex-end;gap:8px;margin-top:14px}" +
    ".pling-ui button{font:inherit;padding:7px 16px;border-radius:8px;border:1px solid #d0d5dd;background:#fff;color:#101828;cursor:pointer}" +
    ".pling-ui button.pling-ui-yes{background:#1f4fd6;border-color:#1f4fd6;color:#fff}" +
    ".pling-ui button:focus-visible{outline:3px solid #84adff;outline-offset:1px}";

  function clock(ms) {
    var s = Math.ceil(ms / 1000), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60;
    s %= 60;
    return (h ? h + ":" + (m < 10 ? "0" : "") : "") + m + ":" + (s < 10 ? "0" : "") + s;
  }

  // show opens one dialog and resolves to o.yes or o.no. o: kind, title,
  // what, more, ms (time left, or 0 for no countdown), expired (the key
  // shown when it runs out), yesKey/noKey, yes/no, modal, risk, focus;
  // fill(d, q) adds content; inert: Approve disabled for INERT_MS; shadow:
  // the dialog goes into a closed shadow root of a <pling-ui> element;
  // opened(api) gets {count(n)} to show how many more are waiting.
  // Only trusted events (a person's input, not a page script's click())
  // answer.
  function show(o, signal, resolve) {
    var id = "pling-ui-" + ++seq, d = doc.createElement("dialog"), host = null, scope = doc;
    if (o.shadow) {
      host = doc.createElement("pling-ui");
      host.setAttribute("data-pling-ui", o.kind);
      scope = host.attachShadow({ mode: "closed" });
      var hs = doc.createElement("style");
      // Page styles cannot reach inside; !important on :host beats the
      // page's own rules for the host element.
      hs.textContent = ":host{display:inline !important;visibility:visible !important;opacity:1 !important}" + CSS;
      scope.appendChild(hs);
    } else if (!doc.getElementById("pling-ui-css")) {
      var st = doc.createElement("style");
      st.id = "pling-ui-css";
      st.textContent = CSS;
      doc.head.appendChild(st);
    }
    d.className = "pling-ui";
    d.id = id;
    d.tabIndex = -1;
    d.setAttribute("data-pling-ui", o.kind);
    d.setAttribute("role", "dialog");
    d.setAttribute("aria-modal", String(o.modal));
    d.setAttribute("aria-labelledby", id + "-title");
    d.setAttribute("aria-describedby", id + "-what " + id + "-more");
    if (o.risk) d.setAttribute("data-risk", o.risk);
    d.innerHTML = '<p class="pling-ui-who" hidden></p><h2></h2><p class="pling-ui-what"></p><p class="pling-ui-more"></p>' +
      '<p class="pling-ui-why" hidden></p><p role="timer"></p>' +
      '<p class="pling-ui-queue" aria-live="polite" hidden></p>' +
      '<div class="pling-ui-buttons"><button type="button" data-pling-ui-answer="no"></button>' +
      '<button type="button" class="pling-ui-yes" data-pling-ui-answer="yes"></button></div>';
    var q = function (s) { return d.querySelector(s); };
    q("h2").id = id + "-title";
    q("h2").textContent = t(o.title);
    q(".pling-ui-what").id = id + "-what";
    q(".pling-ui-what").textContent = o.what || "";
    q(".pling-ui-more").id = id + "-more";
    q(".pling-ui-more").textContent = o.more || "";
    // Who is asking: an AI agent, by the name its session carries.
    if (o.who) { q(".pling-ui-who").hidden = false; q(".pling-ui-who").textContent = o.who; }
    if (o.why) { q(".pling-ui-why").hidden = false; q(".pling-ui-why").textContent = o.why; }
    if (o.fill) o.fill(d, q("[role=timer]"));
    var no = q("[data-pling-ui-answer=no]"), yes = q("[data-pling-ui-answer=yes]"), timer = q("[role=timer]"), queue = q(".pling-ui-queue");
    no.textContent = t(o.noKey);
    yes.textContent = t(o.yesKey);
    timer.hidden = !o.ms;

    var prev = doc.activeElement, end = Date.now() + (o.ms || 0), iv = 0, inert = 0, done = false, armed = !o.inert;
    function tick() {
      var left = end - Date.now();
      timer.textContent = left > 0 ? t("ui.timeLeft").replace("{time}", clock(left)) : t(o.expired);
      if (left <= 0) clearInterval(iv);
    }
    function ours() { var a = doc.activeElement; return !!a && (d.contains(a) || a === host); }
    function close(v) {
      if (done) return;
      done = true;
      clearInterval(iv);
      clearTimeout(inert);
      doc.removeEventListener("visibilitychange", arm);
      var had = ours();
      if (d.open) d.close();
      d.remove();
      if (host) host.remove();
      // Give focus back only if it was ours: the person may be typing in
      // the page by now.
      if (had && prev && prev.focus && doc.contains(prev)) prev.focus();
      resolve(v);
    }
    // Registered with the listener registration pling.js kept, and
    // answered only for an event its isTrusted getter calls trusted.
    kit.listen(no, "click", function (e) { if (kit.trusted(e)) close(o.no); });
    kit.listen(yes, "click", function (e) { if (kit.trusted(e) && armed) close(o.yes); });
    kit.listen(d, "cancel", function (e) { if (!kit.trusted(e)) return; e.preventDefault(); close(o.no); });
    kit.listen(d, "keydown", function (e) {
      if (kit.trusted(e) && e.key === "Escape") { e.preventDefault(); close(o.no); }
    });
    if (signal) signal.onabort = function () { close(o.no); };

    // A page's own modal dialog makes everything outside it inert, so a
    // (non-modal) handoff goes inside it, where both stay usable, and back
    // to the body if the page closes its dialog first.
    var parent = null;
    if (!o.modal) {
      try { parent = [].slice.call(doc.querySelectorAll("dialog:modal")).pop(); } catch (e) { /* no :modal */ }
    }
    if (host) { scope.appendChild(d); doc.body.appendChild(host); } else (parent || doc.body).appendChild(d);
    if (parent) parent.addEventListener("close", function () { if (!done) doc.body.appendChild(d); }, { once: true });
    if (o.modal) d.showModal(); else d.show();
    if (o.near) keepClear(d, o.near);
    // Inert while the page is hidden and again for a moment when it comes
    // back into view: the person may not have seen the dialog appear.
    function arm() {
      armed = false;
      yes.disabled = true;
      clearTimeout(inert);
      if (!doc.hidden) inert = setTimeout(function () { armed = true; yes.disabled = false; }, INERT_MS);
    }
    if (o.inert) { arm(); doc.addEventListener("visibilitychange", arm); }
    // A modal takes focus; a handoff only when the page has none, so a
    // person already typing in the page (the bank's code field) keeps it.
    var busy = doc.activeElement && doc.activeElement !== doc.body && !ours();
    if (o.modal || !busy) (o.focus === "no" ? no : d).focus();
    if (o.ms) { tick(); iv = setInterval(tick, 500); }
    if (o.opened) o.opened({ count: function (n) {
      queue.hidden = !n;
      queue.textContent = n ? t("ui.waiting").replace("{n}", n) : "";
    } });
  }

  // keepClear moves a dialog that would cover the record's element (the
  // element marked data-pling-record="KIND:ID") to the other half of the
  // window, so the person sees the row they are approving for.
  function keepClear(d, near) {
    var el = null;
    try { el = doc.querySelector('[data-pling-record="' + root.CSS.escape(near) + '"]'); } catch (e) { /* no CSS.escape */ }
    if (!el) return;
    var r = el.getBoundingClientRect(), b = d.getBoundingClientRect(), h = root.innerHeight;
    if (r.bottom <= b.top || r.top >= b.bottom || r.bottom < 0 || r.top > h) return;
    d.style.margin = "0 auto";
    d.style.inset = (r.top + r.bottom) / 2 < h / 2 ? "auto 0 20px 0" : "20px 0 auto 0";
    d.setAttribute("data-pling-ui-clear", (r.top + r.bottom) / 2 < h / 2 ? "below" : "above");
  }

  // fillInput lists what an approval is bound to: the record (kind, label,
  // id) and each parameter (title, name, value), as the module rendered
  // them; only textContent is set.
  function fillInput(c) {
    return function (d, before) {
      var dl = doc.createElement("dl");
      function row(term, sub, value, notes) {
        var dt = doc.createElement("dt"), dd = doc.createElement("dd");
        dt.textContent = term;
        if (sub && sub !== term) {
          var s = doc.createElement("span");
          s.textContent = " (" + sub + ")";
          dt.appendChild(s);
        }
        if (value === "") {
          var i = doc.createElement("i");
          i.textContent = t("ui.empty");
          dd.appendChild(i);
        } else dd.textContent = value;
        (notes || []).forEach(function (n) {
          var s = doc.createElement("span");
          s.textContent = n;
          dd.appendChild(s);
        });
        dl.appendChild(dt);
        dl.appendChild(dd);
      }
      var r = c.record;
      if (r && typeof r === "object") row(String(r.kind || ""), "", String(r.label || r.id || ""), r.label ? [String(r.id)] : []);
      (Array.isArray(c.input) ? c.input : []).forEach(function (f) {
        var notes = [];
        if (f.cut) notes.push(t("ui.cut").replace("{n}", String(f.length)));
        if (f.escaped) notes.push(t("ui.escaped"));
        row(String(f.title), String(f.name), String(f.value), notes);
      });
      if (dl.firstChild) {
        dl.id = d.id + "-input";
        d.setAttribute("aria-describedby", d.getAttribute("aria-describedby") + " " + dl.id);
        d.insertBefore(dl, before);
      }
      if (c.more > 0) {
        var p = doc.createElement("p");
        p.className = "pling-ui-more";
        p.textContent = t("ui.moreInput").replace("{n}", String(c.more));
        d.insertBefore(p, before);
      }
    };
  }

  // Approvals are shown one at a time: the rest wait in order, and the
  // open dialog counts them. A waiting approval that the runtime stops
  // waiting for leaves the queue, denied.
  // waiting: a prototype-less queue (a patched Array.prototype.push or
  // shift would see each item and its answer callback); n counts the
  // items still in it.
  var waiting = { __proto__: null, head: 0, tail: 0, n: 0 }, current = null;
  function pending() { return waiting.n; }
  function pump() {
    if (current) { current.count(pending()); return; }
    var next = null;
    while (!next && waiting.head < waiting.tail) {
      next = waiting[waiting.head];
      delete waiting[waiting.head++];
    }
    if (next) waiting.n--;
    if (!next) return;
    current = { count: function () {} };
    var c = next.c, left = c.expiresAtMs - Date.now(), sig = { __proto__: null };
    next.sig = sig;
    show({
      kind: "approve", title: "ui.approvalTitle", what: c.title, more: c.summary, risk: c.risk,
      who: c.agent ? t("ui.agentAsksNamed").replace("{agent}", c.agent) : t("ui.agentAsks"), why: c.reason,
      near: c.record && c.record.kind ? c.record.kind + ":" + c.record.id : "",
      ms: left > 0 && left < 864e5 ? left : 0, expired: "ui.expired",
      yesKey: "ui.approve", noKey: "ui.deny", modal: true, focus: "no", inert: true, shadow: true,
      fill: fillInput(c), opened: function (api) { current.count = api.count; api.count(pending()); },
      yes: { __proto__: null, binding: c.binding, approved: true }, no: { __proto__: null, binding: c.binding, approved: false }
    }, sig, function (v) {
      current = null;
      next.resolve(v);
      pump();
    });
  }

  return {
    // handoff(req, signal, answer): answer("done" | "cancel"); req:
    // {capability, record, title, prompt, timeoutMs}.
    handoff: function (req, signal, answer) {
      show({
        kind: "handoff", title: "ui.handoffTitle", what: req.title, more: req.prompt,
        ms: req.timeoutMs, expired: "errors.HANDOFF_TIMEOUT",
        yesKey: "ui.done", noKey: "ui.cancel", yes: "done", no: "cancel", modal: false
      }, signal, answer);
    },
    // approve(challenge, signal, answer): answer({binding, approved}).
    // expiresAtMs is on the runtime's clock, which in a page is
    // Date.now() (Go's wall clock on js/wasm); a value that does not look
    // like it shows no countdown.
    approve: function (c, signal, answer) {
      var item = { __proto__: null, c: c, resolve: answer, sig: null }, at = waiting.tail++;
      waiting[at] = item;
      waiting.n++;
      if (signal) signal.onabort = function () {
        if (item.sig) { if (item.sig.onabort) item.sig.onabort(); return; }
        if (waiting[at] === item) {
          delete waiting[at];
          waiting.n--;
          answer({ __proto__: null, binding: c.binding, approved: false });
          pump();
        }
      };
      pump();
    }
  };
  });
})(globalThis);
