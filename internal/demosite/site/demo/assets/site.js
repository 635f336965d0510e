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
    // ?approvals=authority: a person approves on the authority's screen
    // (/pling/approve), not in the page (docs/page-api.md §4.2); the page
    // links the screen once the authority holds the challenge.
    if (q.get("approvals") === "authority") c.approvals = "authority";
    if (Object.keys(c).length) pling.configure(c);
  }
  window.addEventListener("pling:waiting", function (e) {
    var id = e.detail && e.detail.approval;
    if (typeof id !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) return;
    var box = document.getElementById("pling-approval-link") || document.createElement("p");
    box.id = "pling-approval-link";
    box.setAttribute("role", "status");
    box.style.cssText = "position:fixed;bottom:1rem;left:1rem;z-index:10;background:#fff;border:1px solid #888;padding:.5rem 1rem;margin:0";
    box.textContent = "An agent asks for your approval: ";
    var a = document.createElement("a");
    a.href = "/pling/approve?id=" + id;
    a.target = "_blank";
    a.rel = "noopener";
    a.textContent = "review it on the approval screen";
    box.appendChild(a);
    document.body.appendChild(box);
  });
  var lang = q.get("lang");
  if (lang) {
    document.documentElement.lang = lang;
    document.querySelectorAll("header.top nav a").forEach(function (a) { a.search = "?lang=" + encodeURIComponent(lang); });
  }
  document.querySelectorAll("header.top nav a").forEach(function (a) {
    if (a.pathname === location.pathname) a.setAttribute("aria-current", "page");
  });
})();
