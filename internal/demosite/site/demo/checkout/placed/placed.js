// The confirmation page: the order number and total from the query.
(function () {
    var q = new URLSearchParams(location.search);
    var order = (q.get("order") || "").slice(0, 20), total = (q.get("total") || "").slice(0, 12);
    if (order) document.getElementById("placed").textContent = "Thank you: order " + order + " is placed";
    document.getElementById("placed-detail").textContent = total ? "€" + total + " to pay on delivery." : "";
  })();
