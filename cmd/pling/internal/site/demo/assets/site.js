// Shared by the demo pages: ?lang=zh-CN switches the page language (the
// Pling overlay follows document.documentElement.lang), and the current
// page is marked in the navigation. Nothing here talks to Pling.
(function () {
  "use strict";
  var lang = new URLSearchParams(location.search).get("lang");
  if (lang) {
    document.documentElement.lang = lang;
    document.querySelectorAll("header.top nav a").forEach(function (a) { a.search = "?lang=" + encodeURIComponent(lang); });
  }
  document.querySelectorAll("header.top nav a").forEach(function (a) {
    if (a.pathname === location.pathname) a.setAttribute("aria-current", "page");
  });
})();
