// The mirror's early tools on a page whose modal dialog is open: only the
// actions of the dialog are listed (runtime regions), before the module
// as after (webmcpport.js).
"use strict";

const test = require("node:test");
const { portCase } = require("../testsupport.js");

test("webmcp: an open modal region hides the other tools before the module too", (t) =>
  portCase(t, { expose: ["*"] }, (pling, run) => {
    pling.region({ id: "confirm", title: "Confirm the booking", modal: true, active: () => true });
    pling.region({ id: "aside", title: "Help", active: () => true });
    pling.action({ id: "booking.confirm", title: "Confirm", region: "confirm", run });
    pling.action({ id: "booking.cancel", title: "Cancel", region: "confirm", risk: "destructive", run });
    pling.action({ id: "slots.pick", title: "Pick a slot", run });
    pling.action({ id: "help.open", title: "Open help", region: "aside", risk: "read", run });
  }, ["booking_cancel", "booking_confirm"]));
