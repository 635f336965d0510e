// The shop: a product list, a cart and a checkout with a 3-D Secure step.
// The page works for a person on its own; the block at the end declares
// the same abilities to agents through the public page API (docs/page-api.md).
(function () {
  "use strict";

  var products = [
    { sku: "tent-2p", name: "Trailhead 2-person tent", price: 18900, stock: 4, color: "#2f6f4f" },
    { sku: "pack-20", name: "Summit 20 L daypack", price: 5900, stock: 12, color: "#8a4b2a" },
    { sku: "stove-mini", name: "Alpine mini stove", price: 3450, stock: 0, color: "#5b5f97" },
    { sku: "lamp-head", name: "Beacon headlamp", price: 2400, stock: 30, color: "#b8860b" },
    { sku: "bottle-1l", name: "Insulated bottle 1 L", price: 1990, stock: 25, color: "#2b6cb0" },
    { sku: "socks-wool", name: "Merino hiking socks", price: 1400, stock: 50, color: "#9b2c5a" },
  ];
  var bySku = {};
  products.forEach(function (p) { bySku[p.sku] = p; });

  // The cart lives in the tab's sessionStorage, so the checkout page
  // (/checkout/) sees it: [{sku, qty}] here, with names and prices there.
  var CART_KEY = "northwind.cart";
  var cart = []; // [{sku, qty}]
  try {
    cart = (JSON.parse(sessionStorage.getItem(CART_KEY) || "[]") || []).filter(function (l) {
      return l && bySku[l.sku] && l.qty > 0;
    }).map(function (l) { return { sku: l.sku, qty: l.qty }; });
  } catch (e) { cart = []; }
  function save() {
    try {
      sessionStorage.setItem(CART_KEY, JSON.stringify(cart.map(function (l) {
        var p = bySku[l.sku];
        return { sku: l.sku, qty: l.qty, name: p.name, price: p.price };
      })));
    } catch (e) { /* private mode: the cart stays on this page */ }
  }
  var status = "idle"; // idle | awaiting-3ds | paid | cancelled
  var lastOrder = null, lastPaid = 0;
  var orderSeq = 1041;

  var $ = function (id) { return document.getElementById(id); };
  var money = function (cents) { return "€" + (cents / 100).toFixed(2); };

  function count() { return cart.reduce(function (n, l) { return n + l.qty; }, 0); }
  function total() { return cart.reduce(function (n, l) { return n + l.qty * bySku[l.sku].price; }, 0); }
  function inCart(sku) { var l = cart.find(function (l) { return l.sku === sku; }); return l ? l.qty : 0; }

  function say(alertText, statusText) {
    $("shop-alert").textContent = alertText || "";
    $("shop-status").textContent = statusText || "";
  }

  // add and remove are what the buttons do; they throw when the shop says no,
  // and the agent then gets EXECUTION_FAILED with the same message.
  function add(sku, qty) {
    var p = bySku[sku];
    qty = qty || 1;
    if (!p) throw new Error("There is no product " + sku);
    if (p.stock - inCart(sku) < qty) {
      var left = p.stock - inCart(sku);
      var msg = left > 0 ? "Only " + left + " " + p.name + " left in stock" : p.name + " is out of stock";
      say(msg);
      render();
      throw new Error(msg);
    }
    var line = cart.find(function (l) { return l.sku === sku; });
    if (line) line.qty += qty; else cart.push({ sku: sku, qty: qty });
    say("", "Added " + qty + " × " + p.name);
    render();
    return { sku: sku, qty: inCart(sku), cartCount: count() };
  }

  function remove(sku) {
    var i = cart.findIndex(function (l) { return l.sku === sku; });
    if (i < 0) throw new Error("That product is not in the cart");
    var line = cart.splice(i, 1)[0];
    say("", "Removed " + bySku[sku].name);
    render();
    return { sku: sku, removed: line.qty, cartCount: count() };
  }

  // startPayment opens the bank's 3-D Secure window; the person confirms or
  // cancels there.
  function startPayment() {
    if (!cart.length) throw new Error("The cart is empty");
    status = "awaiting-3ds";
    say("", "");
    $("tds-amount").textContent = money(total());
    $("tds-code").value = "";
    $("tds-alert").textContent = "";
    if (!$("tds").open) $("tds").show();
    $("tds-code").focus();
    render();
    return { total: total() / 100, currency: "EUR" };
  }

  function confirmPayment(code) {
    if (code !== "123456") {
      $("tds-alert").textContent = "The code is not correct";
      return;
    }
    cart.forEach(function (l) { bySku[l.sku].stock -= l.qty; });
    lastOrder = "NW-" + ++orderSeq;
    var paid = lastPaid = total();
    cart = [];
    status = "paid";
    $("tds").close();
    say("", "Order " + lastOrder + " placed. Paid " + money(paid) + ".");
    render();
  }

  function cancelPayment() {
    status = "cancelled";
    $("tds").close();
    say("The payment was cancelled");
    render();
  }

  function render() {
    save();
    $("products").replaceChildren.apply($("products"), products.map(function (p) {
      var left = p.stock - inCart(p.sku);
      var el = document.createElement("article");
      el.className = "card product";
      el.innerHTML =
        '<div class="art"></div><h3></h3><div class="price"></div><div class="stock"></div>' +
        '<div class="buy"><input type="number" min="1" value="1" aria-label="Quantity"><button class="primary">Add to cart</button></div>';
      el.querySelector(".art").style.background = "linear-gradient(135deg," + p.color + ",#1d2330)";
      el.querySelector(".art").textContent = p.name.split(" ").map(function (w) { return w[0]; }).join("").slice(0, 2);
      el.querySelector("h3").textContent = p.name;
      el.querySelector(".price").textContent = money(p.price);
      var st = el.querySelector(".stock");
      st.textContent = left > 0 ? left + " in stock" : "Out of stock";
      if (left <= 0) st.classList.add("out");
      var qty = el.querySelector("input"), btn = el.querySelector("button");
      qty.max = Math.max(1, left);
      btn.disabled = left <= 0;
      btn.setAttribute("aria-label", "Add " + p.name + " to cart");
      btn.onclick = function () { try { add(p.sku, Math.max(1, parseInt(qty.value, 10) || 1)); } catch (e) { /* shown in the alert */ } };
      return el;
    }));
    $("cart-lines").replaceChildren.apply($("cart-lines"), cart.map(function (l) {
      var p = bySku[l.sku], li = document.createElement("li");
      li.innerHTML = '<span class="name"></span><span class="muted"></span><button class="small">Remove</button>';
      li.querySelector(".name").textContent = p.name + " × " + l.qty;
      li.querySelector(".muted").textContent = money(p.price * l.qty);
      li.querySelector("button").setAttribute("aria-label", "Remove " + p.name);
      li.querySelector("button").onclick = function () { remove(l.sku); };
      return li;
    }));
    $("cart-empty").hidden = cart.length > 0;
    $("cart-total").textContent = money(total());
    $("cart-badge").textContent = count();
    $("checkout").disabled = !cart.length || status === "awaiting-3ds";
  }

  $("checkout").onclick = startPayment;
  $("tds-form").addEventListener("submit", function (e) { e.preventDefault(); confirmPayment($("tds-code").value.trim()); });
  $("tds-cancel").onclick = cancelPayment;
  render();

  // What an agent may do here. Without pling.js (not built, blocked) the
  // shop still works for a person.
  var pling = window.pling;
  if (!pling) return;
  var skus = products.map(function (p) { return p.sku; });

  pling.state("cart.count", count, { description: "Items in the cart" });
  pling.state("cart.total", function () { return total() / 100; }, { description: "Cart total in EUR" });
  pling.state("cart.lines", function () { return cart.map(function (l) { return { sku: l.sku, qty: l.qty }; }); });
  pling.state("checkout.status", function () { return status; }, { description: "idle, awaiting-3ds, paid or cancelled" });
  pling.state("order.last", function () { return lastOrder; });

  pling.action({
    id: "cart.add", title: "Add to cart",
    description: "Adds a product to the cart. Products: " + products.map(function (p) { return p.sku + " (" + p.name + ")"; }).join(", "),
    params: {
      sku: { type: "string", required: true, enum: skus, description: "The product's SKU" },
      qty: { type: "integer", minimum: 1, maximum: 10, description: "How many (default 1)" },
    },
    run: function (input) { return add(input.sku, input.qty); },
    expect: { state: "cart.count", change: "increase" },
  });

  pling.action({
    id: "cart.remove", title: "Remove from cart",
    params: { sku: { type: "string", required: true, enum: skus, description: "The product's SKU" } },
    available: function () { return cart.length > 0 || "The cart is empty"; },
    run: function (input) { return remove(input.sku); },
    expect: { state: "cart.count", change: "decrease" },
  });

  pling.action({
    id: "checkout", title: "Check out and pay",
    description: "Pays for the cart. The person confirms the payment with their bank (3-D Secure); the agent waits.",
    available: function () { return cart.length > 0 || "The cart is empty"; },
    // Three minutes, unless ?handoffTimeoutMs= (site.js) asks for another
    // time: the action's own timeout wins over the configured default.
    // The call's value is read once the person is done: the order they
    // placed, not the total the handler saw before they confirmed.
    handoff: { prompt: "Your bank needs you to confirm this payment. Enter the code in the bank's window, confirm, then press Done.", timeoutMs: Number(new URLSearchParams(location.search).get("handoffTimeoutMs")) || 180000,
      result: function () { return { order: lastOrder, status: status, total: lastPaid / 100, currency: "EUR" }; } },
    run: startPayment,
    expect: { state: "checkout.status", equals: "paid" },
  });

  pling.guide("checkout-button", { label: "The Checkout button", selector: "#checkout" });
})();
