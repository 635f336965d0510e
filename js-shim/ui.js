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
 * nothing else should happen until the person decides. */
(function (root) {
  "use strict";
  var doc = root.document, words = {}, seq = 0;

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
    ".pling-ui .pling-ui-what{font-weight:600}.pling-ui .pling-ui-more{color:#475467;font-size:14px}" +
    ".pling-ui [role=timer]{font-size:13px;color:#475467;font-variant-numeric:tabular-nums}" +
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
  // shown when it runs out), yesKey/noKey, yes/no, modal, risk.
  function show(o, signal) {
    if (!doc.getElementById("pling-ui-css")) {
      var st = doc.createElement("style");
      st.id = "pling-ui-css";
      st.textContent = CSS;
      doc.head.appendChild(st);
    }
    var id = "pling-ui-" + ++seq, d = doc.createElement("dialog");
    d.className = "pling-ui";
    d.id = id;
    d.tabIndex = -1;
    d.setAttribute("data-pling-ui", o.kind);
    d.setAttribute("role", "dialog");
    d.setAttribute("aria-modal", String(o.modal));
    d.setAttribute("aria-labelledby", id + "-title");
    d.setAttribute("aria-describedby", id + "-what " + id + "-more");
    if (o.risk) d.setAttribute("data-risk", o.risk);
    d.innerHTML = '<h2></h2><p class="pling-ui-what"></p><p class="pling-ui-more"></p><p role="timer"></p>' +
      '<div class="pling-ui-buttons"><button type="button" data-pling-ui-answer="no"></button>' +
      '<button type="button" class="pling-ui-yes" data-pling-ui-answer="yes"></button></div>';
    var q = function (s) { return d.querySelector(s); };
    q("h2").id = id + "-title";
    q("h2").textContent = t(o.title);
    q(".pling-ui-what").id = id + "-what";
    q(".pling-ui-what").textContent = o.what || "";
    q(".pling-ui-more").id = id + "-more";
    q(".pling-ui-more").textContent = o.more || "";
    var no = q("[data-pling-ui-answer=no]"), yes = q("[data-pling-ui-answer=yes]"), timer = q("[role=timer]");
    no.textContent = t(o.noKey);
    yes.textContent = t(o.yesKey);
    timer.hidden = !o.ms;

    var prev = doc.activeElement, end = Date.now() + (o.ms || 0), iv = 0, done = false, resolve;
    function tick() {
      var left = end - Date.now();
      timer.textContent = left > 0 ? t("ui.timeLeft").replace("{time}", clock(left)) : t(o.expired);
      if (left <= 0) clearInterval(iv);
    }
    function close(v) {
      if (done) return;
      done = true;
      clearInterval(iv);
      var had = d.contains(doc.activeElement);
      if (d.open) d.close();
      d.remove();
      // Give focus back only if it was ours: the person may be typing in
      // the page by now.
      if (had && prev && prev.focus && doc.contains(prev)) prev.focus();
      resolve(v);
    }
    no.onclick = function () { close(o.no); };
    yes.onclick = function () { close(o.yes); };
    d.addEventListener("cancel", function (e) { e.preventDefault(); close(o.no); });
    d.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { e.preventDefault(); close(o.no); }
    });
    if (signal) signal.onabort = function () { close(o.no); };

    // A page's own modal dialog makes everything outside it inert, so a
    // (non-modal) handoff goes inside it, where both stay usable, and back
    // to the body if the page closes its dialog first.
    var host = null;
    if (!o.modal) {
      try { host = [].slice.call(doc.querySelectorAll("dialog:modal")).pop(); } catch (e) { /* no :modal */ }
    }
    (host || doc.body).appendChild(d);
    if (host) host.addEventListener("close", function () { if (!done) doc.body.appendChild(d); }, { once: true });
    if (o.modal) d.showModal(); else d.show();
    // A modal takes focus; a handoff only when the page has none, so a
    // person already typing in the page (the bank's code field) keeps it.
    var busy = doc.activeElement && doc.activeElement !== doc.body && !d.contains(doc.activeElement);
    if (o.modal || !busy) (o.focus === "no" ? no : d).focus();
    if (o.ms) { tick(); iv = setInterval(tick, 500); }
    return new Promise(function (r) { resolve = r; });
  }

  root.__plingUI = {
    // handoff(req, signal) → "done" | "cancel"; req: {capability, record,
    // title, prompt, timeoutMs}.
    handoff: function (req, signal) {
      return show({
        kind: "handoff", title: "ui.handoffTitle", what: req.title, more: req.prompt,
        ms: req.timeoutMs, expired: "errors.HANDOFF_TIMEOUT",
        yesKey: "ui.done", noKey: "ui.cancel", yes: "done", no: "cancel", modal: false
      }, signal);
    },
    // approve(challenge, signal) → {binding, approved}. expiresAtMs is on
    // the runtime's clock, which in a page is Date.now() (Go's wall clock
    // on js/wasm); a value that does not look like it shows no countdown.
    approve: function (c, signal) {
      var left = c.expiresAtMs - Date.now();
      return show({
        kind: "approve", title: "ui.approvalTitle", what: c.title, more: c.summary, risk: c.risk,
        ms: left > 0 && left < 864e5 ? left : 0, expired: "ui.expired",
        yesKey: "ui.approve", noKey: "ui.deny", modal: true, focus: "no",
        yes: { binding: c.binding, approved: true }, no: { binding: c.binding, approved: false }
      }, signal);
    }
  };
})(globalThis);
