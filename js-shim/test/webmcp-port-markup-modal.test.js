// The mirror's early tools on a page with a modal read from markup: it
// hides only the markup actions outside it, never the site's script
// actions (runtime regionView.blocked), before the module as after.
"use strict";

const test = require("node:test");
const { portCase } = require("../testsupport.js");

const at = (path, more) => Object.assign({ path }, more);

test("webmcp: a modal read from markup hides only markup actions, before the module too", (t) =>
  portCase(t, { expose: ["*"], origin: "https://recipes.example" }, (pling, run) => {
    pling.region({ id: "notice", title: "Notice", modal: true, markup: at("div"), active: () => true });
    pling.action({ id: "notice.ack", title: "I understand", region: "notice", identity: "markup", markup: at("div > button"), run });
    pling.action({ id: "helpful", title: "Helpful", identity: "markup", markup: at("main > button"), run });
    pling.action({ id: "account.delete", title: "Delete my account", run });
  }, ["account_delete", "notice_ack"]));
