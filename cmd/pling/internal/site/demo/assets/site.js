// Shared by the demo pages: ?lang=zh-CN switches the page language (the
// Pling overlay follows document.documentElement.lang), and the current
// page is marked in the navigation. Demo knobs for scripted sessions:
// ?rate=BURST,PER_SECOND sets the invoke budget (so a burst shows
// RATE_LIMITED and the wait), ?handoffTimeoutMs= and ?approvalTtlMs= set
// how long a person has. They configure Pling before the module starts.
// When pling serve knows an authority, each page carries its session-token
// keys in <meta name="pling-keys"> (JSON, kid → public key), passed on as
// the keys option so delegated sessions verify.
(function () {
  "use strict";
  var q = new URLSearchParams(location.search);
  if (window.pling) {
    var c = {}, rate = q.get("rate");
    if (rate) {
      var r = rate.split(",").map(Number);
      if (r[0] > 0) c.rateLimit = { invoke: { burst: r[0], perSecond: r[1] || 1 }, describe: { burst: 120, perSecond: 10 } };
    }
    var km = document.querySelector('meta[name="pling-keys"]');
    if (km) {
      try { c.keys = JSON.parse(km.getAttribute("content")); } catch (e) { console.error("pling-keys: " + e); }
    }
    ["handoffTimeoutMs", "approvalTtlMs"].forEach(function (k) {
      var v = Number(q.get(k));
      if (v > 0) c[k] = v;
    });
    if (Object.keys(c).length) pling.configure(c);
  }
  var lang = q.get("lang");
  if (lang) {
    document.documentElement.lang = lang;
    document.querySelectorAll("header.top nav a").forEach(function (a) { a.search = "?lang=" + encodeURIComponent(lang); });
  }
  document.querySelectorAll("header.top nav a").forEach(function (a) {
    if (a.pathname === location.pathname) a.setAttribute("aria-current", "page");
  });
})();
