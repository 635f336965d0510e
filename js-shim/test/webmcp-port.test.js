// The page: actions of every simple shape, row actions declared once for
// every record of their kind, regions (none modal and open), handoffs.
"use strict";

const test = require("node:test");
const { portCase } = require("../testsupport.js");

test("webmcp: the tools registered before the module equal pling.tools() once it runs", (t) =>
  portCase(t, { expose: ["shop.*", "misc.*"], anonymous: ["shop.*", "misc.ok*"], origin: "https://shop.test" }, (pling, run) => {
    pling.state("n", () => 1);
    pling.guide("cart", "The cart");
    pling.action({ id: "shop.search", title: "Search products", description: "By name or SKU. Shows prices.", risk: "read", run,
      params: { q: { type: "string", description: "Words", minLength: 1, maxLength: 80, pattern: "^[^<>]*$" }, page: { type: "integer", minimum: 1, maximum: 50, default: 1 } } });
    pling.action({ id: "shop.cart.add", title: "Add to cart", run,
      params: { sku: { type: "string", required: true }, qty: { type: "number", required: true, minimum: 0.5 }, gift: { type: "boolean" }, size: { type: "string", enum: ["S", "M", "L"] } } });
    pling.action({ id: "shop.order.cancel", title: "Cancel the order", risk: "destructive", run });
    pling.action({ id: "shop.pay", title: "Pay — €, 支付", description: "Charges the card on file", approval: true, run });
    pling.action({ id: "shop.hidden", title: "Hidden", available: () => "It is not visible on the page", run });
    pling.action({ id: "shop.off", title: "Off", available: false, run });
    pling.action({ id: "shop.on", title: "On", available: () => 1, run });
    pling.action({ id: "shop.z-last_1", title: "Last", run });
    pling.action({ id: "misc.ok", title: "Misc ok", run });
    pling.action({ id: "misc.nope", title: "Not for anonymous callers", run });
    pling.action({ id: "admin.wipe", title: "Not exposed", risk: "destructive", run });
    // Row actions declared once for every record of their kind.
    pling.records("order", () => [{ id: "o1", label: "#1001 Ada" }, { id: "o2", label: "#1002 Bo" }]);
    pling.action({ id: "shop.approve", title: "Approve the order", record: { kind: "order" }, run });
    pling.action({ id: "shop.refund", title: "Refund the order", description: "Gives the money back.", risk: "destructive", approval: true, record: { kind: "order" }, available: () => true, run,
      params: { reason: { type: "string", required: true, maxLength: 200 }, amount: { type: "number", minimum: 0 } } });
    pling.action({ id: "shop.find", title: "Find an order", risk: "read", record: { kind: "order", allowOffscreen: true }, run });
    pling.action({ id: "shop.note", title: "Note on a ticket", record: { kind: "ticket", allowOffscreen: true }, run });
    pling.action({ id: "shop.call", title: "Call the lead?", record: { kind: "lead" }, run });
    // Regions: an action in an inactive region is not listed; one in an
    // active region is.
    pling.region({ id: "dlg", title: "Escalate", modal: true, active: () => false });
    pling.action({ id: "shop.escalate", title: "Escalate", region: "dlg", run });
    pling.region({ id: "side", title: "Side panel", active: () => true });
    pling.action({ id: "shop.side", title: "Side action", region: "side", run });
    // Handoffs: the wait a tool says, its own or the default.
    pling.action({ id: "shop.ask", title: "Ask the person", handoff: { prompt: "Pick a size", timeoutMs: 90000 }, run });
    pling.action({ id: "shop.sign", title: "Sign", handoff: "Sign here", run });
  }, ["misc_ok", "shop_approve__order", "shop_ask", "shop_call__lead", "shop_cart_add", "shop_find__order", "shop_note__ticket", "shop_on", "shop_order_cancel", "shop_pay", "shop_refund__order", "shop_search", "shop_side", "shop_sign", "shop_z-last_1"]));
