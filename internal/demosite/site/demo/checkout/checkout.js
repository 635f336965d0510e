// The checkout: the cart the shop left in the tab's sessionStorage, paid
// on delivery. Placing the order shows the confirmation page, a plain page
// without Pling (/checkout/placed/), a moment later — a redirect the page
// does by itself.
(function () {
  "use strict";

  var CART_KEY = "northwind.cart";
  var $ = function (id) { return document.getElementById(id); };
  var money = function (cents) { return "€" + (cents / 100).toFixed(2); };
  var cart = [];
  try {
    cart = (JSON.parse(sessionStorage.getItem(CART_KEY) || "[]") || []).filter(function (l) {
      return l && typeof l.sku === "string" && l.qty > 0 && l.price >= 0;
    });
  } catch (e) { cart = []; }
  var status = "open"; // open | placed
  var lastOrder = null;

  function total() { return cart.reduce(function (n, l) { return n + l.qty * l.price; }, 0); }
  function count() { return cart.reduce(function (n, l) { return n + l.qty; }, 0); }

  function place() {
    if (!cart.length) throw new Error("The cart is empty");
    var paid = total();
    lastOrder = "NW-" + (1042 + Math.floor(paid / 100) % 900);
    cart = [];
    status = "placed";
    try { sessionStorage.removeItem(CART_KEY); } catch (e) { /* nothing to clear */ }
    render();
    $("co-status").textContent = "Order " + lastOrder + " placed. " + money(paid) + " to pay on delivery.";
    var next = "/checkout/placed/?order=" + encodeURIComponent(lastOrder) + "&total=" + (paid / 100).toFixed(2);
    setTimeout(function () { location.assign(next); }, 1000);
    return { order: lastOrder, total: paid / 100, currency: "EUR", payment: "on delivery" };
  }

  function render() {
    $("co-lines").replaceChildren.apply($("co-lines"), cart.map(function (l) {
      var li = document.createElement("li");
      li.innerHTML = '<span class="name"></span><span class="muted"></span>';
      li.querySelector(".name").textContent = (l.name || l.sku) + " × " + l.qty;
      li.querySelector(".muted").textContent = money(l.price * l.qty);
      return li;
    }));
    $("co-empty").hidden = cart.length > 0;
    $("co-total").textContent = money(total());
    $("place").disabled = !cart.length;
  }

  $("place").onclick = function () { try { place(); } catch (e) { $("co-alert").textContent = e.message; } };
  render();

  var pling = window.pling;
  if (!pling) return;
  pling.state("cart.count", count, { description: "Items in the cart" });
  pling.state("cart.total", function () { return total() / 100; }, { description: "Cart total in EUR" });
  pling.state("checkout.status", function () { return status; }, { description: "open or placed" });
  pling.state("order.last", function () { return lastOrder; });
  pling.action({
    id: "order.place", title: "Place the order",
    description: "Places the order for the cart, paid on delivery, and returns the order number and the total. The page then shows the confirmation.",
    available: function () { return cart.length > 0 || "The cart is empty: add products in the shop (/shop/) first"; },
    run: place,
    expect: { state: "checkout.status", equals: "placed" },
  });
})();
