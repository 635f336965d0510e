// Shared by the demo pages: ?lang=zh-CN switches the page language (the
// Pling overlay follows document.documentElement.lang), and the current
// page is marked in the navigation. Demo knobs for scripted sessions:
// ?rate=BURST,PER_SECOND sets the invoke budget (so a burst shows
// RATE_LIMITED and the wait), ?handoffTimeoutMs= and ?approvalTtlMs= set
// how long a person has. They configure Pling before the module starts.
// When pling serve knows an authority, pling serve adds data-authority to
// each page's pling.js tag: the module follows it by itself.
(function () {
  "use strict";
  var q = new URLSearchParams(location.search);
  if (window.pling) {
    var c = {}, rate = q.get("rate");
    if (rate) {
      var r = rate.split(",").map(Number);
      if (r[0] > 0) c.rateLimit = { invoke: { burst: r[0], perSecond: r[1] || 1 }, describe: { burst: 120, perSecond: 10 } };
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
