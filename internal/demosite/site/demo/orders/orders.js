// The orders admin: 500 orders in a virtualized list (only the rows in
// view, plus a few, exist in the DOM). Row actions are declared once per
// kind of record and folded by the runtime into approve@order,
// refund@order and open@order (docs/protocol.md §4.1).
(function () {
  "use strict";

  var ROW = 32, OVERSCAN = 3;
  // ?rows=all renders every row instead of the window in view: an opt-in
  // for measurements that compare with an all-rows accessibility snapshot.
  var ALL_ROWS = new URLSearchParams(location.search).get("rows") === "all";
  var $ = function (id) { return document.getElementById(id); };
  var money = function (cents) { return "€" + (cents / 100).toFixed(2); };

  // 500 orders, the same on every load (a seeded generator), so tests and
  // screenshots are stable.
  var seed = 20240611;
  function rand() {
    seed = (seed + 0x6d2b79f5) | 0;
    var t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  var first = ["Ada", "Bao", "Chiara", "Dmitri", "Elif", "Femi", "Grace", "Hiro", "Ines", "Jonas", "Kavya", "Liam", "Mei", "Noor", "Oskar", "Priya", "Quinn", "Rosa", "Sami", "Tomás"];
  var last = ["Jensen", "Nguyen", "Rossi", "Petrov", "Yilmaz", "Adeyemi", "Okafor", "Tanaka", "García", "Berg", "Iyer", "Murphy", "Chen", "Haddad", "Lind", "Shah", "Walsh", "Díaz", "Kaya", "Novak"];
  var items = ["Trailhead 2-person tent", "Summit 20 L daypack", "Beacon headlamp", "Insulated bottle 1 L", "Merino hiking socks", "Alpine mini stove"];
  var statuses = ["pending", "pending", "pending", "pending", "approved", "approved", "approved", "shipped", "shipped", "refunded"];
  var orders = [], byId = {};
  for (var i = 0; i < 500; i++) {
    var day = new Date(Date.UTC(2025, 2, 1) + Math.floor(i / 4) * 86400000);
    var o = {
      id: "ord_" + (i + 1), number: 1001 + i,
      customer: first[Math.floor(rand() * first.length)] + " " + last[Math.floor(rand() * last.length)],
      date: day.toISOString().slice(0, 10),
      items: 1 + Math.floor(rand() * 4) + " × " + items[Math.floor(rand() * items.length)],
      total: 1200 + Math.floor(rand() * 46000),
      status: statuses[Math.floor(rand() * statuses.length)],
      note: "",
    };
    orders.push(o);
    byId[o.id] = o;
  }

  var filter = "all", openId = null, view = orders;

  function label(o) { return "#" + o.number + " · " + o.customer + " · " + o.status + " · " + money(o.total); }
  function count(st) { return orders.filter(function (o) { return o.status === st; }).length; }
  function alertText(s) { $("orders-alert").textContent = s || ""; }

  // The rows in view now: the window the list renders, minus the overscan.
  function inView() {
    var vp = $("viewport");
    var from = Math.floor(vp.scrollTop / ROW), to = Math.ceil((vp.scrollTop + vp.clientHeight) / ROW);
    return { from: from, to: Math.min(view.length, to) };
  }

  function setFilter(st) {
    filter = st;
    $("filter").value = st;
    view = st === "all" ? orders : orders.filter(function (o) { return o.status === st; });
    $("viewport").scrollTop = 0;
    render();
  }

  function approve(id, note) {
    var o = byId[id];
    if (!o || o.status !== "pending") throw new Error("Only pending orders can be approved");
    o.status = "approved";
    o.note = note || o.note;
    alertText("");
    refresh();
    return { order: "#" + o.number, status: o.status };
  }

  function refund(id, reason) {
    var o = byId[id];
    if (!o || (o.status !== "approved" && o.status !== "shipped")) throw new Error("Only approved or shipped orders can be refunded");
    o.status = "refunded";
    o.note = "Refunded: " + (reason || "other");
    alertText("");
    refresh();
    return { order: "#" + o.number, status: o.status, refunded: o.total / 100 };
  }

  // open scrolls the order into view (showing all orders if the filter
  // hides it) and shows its details.
  function open(id) {
    var o = byId[id];
    if (!o) throw new Error("There is no order " + id);
    if (view.indexOf(o) < 0) setFilter("all");
    var idx = view.indexOf(o), vp = $("viewport");
    var r = inView();
    if (idx < r.from || idx >= r.to) vp.scrollTop = Math.max(0, idx * ROW - vp.clientHeight / 2);
    openId = id;
    render();
    return { order: "#" + o.number, customer: o.customer, date: o.date, items: o.items, total: o.total / 100, status: o.status, note: o.note };
  }

  var buttons = {
    approve: { text: "Approve", when: function (o) { return o.status === "pending"; }, run: function (o) { approve(o.id); } },
    refund: { text: "Refund", when: function (o) { return o.status === "approved" || o.status === "shipped"; }, run: function (o) { refund(o.id, "other"); }, cls: "danger" },
    open: { text: "Open", when: function () { return true; }, run: function (o) { open(o.id); } },
  };

  function actionButtons(o) {
    return Object.keys(buttons).filter(function (k) { return buttons[k].when(o); }).map(function (k) {
      var b = document.createElement("button"), spec = buttons[k];
      b.className = "small " + (spec.cls || "");
      b.textContent = spec.text;
      b.setAttribute("aria-label", spec.text + " order #" + o.number);
      b.onclick = function () { try { spec.run(o); } catch (e) { alertText(e.message); } };
      return b;
    });
  }

  function render() {
    var rows = $("rows");
    rows.style.height = view.length * ROW + "px";
    var r = inView(), from = Math.max(0, r.from - OVERSCAN), to = Math.min(view.length, r.to + OVERSCAN);
    if (ALL_ROWS) { from = 0; to = view.length; }
    var out = [];
    for (var i = from; i < to; i++) {
      var o = view[i], el = document.createElement("div");
      el.className = "row" + (o.id === openId ? " open" : "");
      el.setAttribute("role", "row");
      el.setAttribute("aria-rowindex", i + 2);
      el.dataset.order = o.id;
      el.setAttribute("data-pling-record", "order:" + o.id); // the approval dialog keeps clear of it
      el.style.top = i * ROW + "px";
      el.innerHTML = '<span class="num" role="cell"></span><span role="cell"></span><span role="cell"></span>' +
        '<span class="total" role="cell"></span><span role="cell"><span class="pill"></span></span><span class="acts" role="cell"></span>';
      var c = el.children;
      c[0].textContent = "#" + o.number;
      c[1].textContent = o.customer;
      c[2].textContent = o.date;
      c[3].textContent = money(o.total);
      c[4].firstChild.textContent = o.status;
      c[4].firstChild.classList.add(o.status);
      c[5].replaceChildren.apply(c[5], actionButtons(o));
      out.push(el);
    }
    rows.replaceChildren.apply(rows, out);
    $("counts").textContent = view.length + " shown · " + count("pending") + " pending · " + count("refunded") + " refunded";
    renderDetail();
  }

  function renderDetail() {
    var o = openId && byId[openId];
    $("detail-empty").hidden = !!o;
    $("detail-body").hidden = !o;
    if (!o) return;
    $("d-num").textContent = "#" + o.number;
    $("d-customer").textContent = o.customer;
    $("d-date").textContent = o.date;
    $("d-items").textContent = o.items;
    $("d-total").textContent = money(o.total);
    $("d-status").innerHTML = '<span class="pill ' + o.status + '"></span>';
    $("d-status").firstChild.textContent = o.status;
    $("d-note").textContent = o.note || "—";
    var acts = actionButtons(o).filter(function (b) { return b.textContent !== "Open"; });
    $("d-acts").replaceChildren.apply($("d-acts"), acts);
  }

  // refresh re-renders after a change of status: a filtered view drops the
  // rows that no longer match.
  function refresh() {
    if (filter !== "all") view = orders.filter(function (o) { return o.status === filter; });
    render();
  }

  var ticking = false;
  $("viewport").addEventListener("scroll", function () {
    if (ticking) return;
    ticking = true;
    requestAnimationFrame(function () { ticking = false; render(); });
  });
  $("filter").onchange = function () { setFilter($("filter").value); };
  render();

  var pling = window.pling;
  if (!pling) return;

  pling.state("orders.pending", function () { return count("pending"); }, { description: "Orders waiting for approval" });
  pling.state("orders.refunded", function () { return count("refunded"); });
  pling.state("orders.filter", function () { return filter; });
  pling.state("orders.open", function () { return openId; }, { description: "The order whose details are shown" });

  // Every order is a record; the ones in the viewport are visible, the
  // rest exist offscreen (not rendered).
  pling.records("order", function () {
    var r = inView(), shown = {};
    for (var i = r.from; i < r.to; i++) shown[view[i].id] = true;
    return orders.map(function (o) { return { id: o.id, label: label(o), visible: !!shown[o.id] }; });
  });

  // Row actions, declared once for every record of kind "order". Approve
  // and refund act only on rows the person can see; open brings any order
  // into view.
  pling.action({
    id: "approve", title: "Approve order", description: "Approves a pending order so the warehouse ships it.",
    record: { kind: "order" },
    params: { note: { type: "string", maxLength: 200, description: "A note for the warehouse" } },
    available: function (record) { return !record || (byId[record] && byId[record].status === "pending") || "Only pending orders can be approved"; },
    run: function (input) { return approve(input.record, input.note); },
    expect: { state: "orders.pending", change: "decrease" },
  });
  pling.action({
    id: "refund", title: "Refund order", description: "Refunds the whole order to the customer. A person must approve each refund.",
    risk: "destructive", approval: true,
    record: { kind: "order" },
    params: { reason: { type: "string", required: true, enum: ["damaged", "late", "wrong-item", "other"], description: "Why the order is refunded" } },
    available: function (record) {
      var o = record && byId[record];
      return !record || (o && (o.status === "approved" || o.status === "shipped")) || "Only approved or shipped orders can be refunded";
    },
    run: function (input) { return refund(input.record, input.reason); },
    expect: { state: "orders.refunded", change: "increase" },
  });
  pling.action({
    id: "open", title: "Open order", description: "Scrolls the order into view and shows its details.",
    risk: "read", record: { kind: "order", allowOffscreen: true },
    run: function (input) { return open(input.record); },
  });
  pling.action({
    id: "orders.filter", title: "Filter orders by status", risk: "read",
    params: { status: { type: "string", required: true, enum: ["all", "pending", "approved", "shipped", "refunded"] } },
    run: function (input) { setFilter(input.status); return { status: filter, shown: view.length }; },
  });
})();
