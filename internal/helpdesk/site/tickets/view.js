// One ticket: replies (checked by this script), its priority, and an
// escalation dialog.
const hd = window.helpdesk;
const t = hd.byId.get(new URLSearchParams(location.search).get("id")) || hd.tickets[0];
const dialog = document.getElementById("escalation");

function render() {
  document.title = t.number + " · Acme Help Desk";
  document.getElementById("title").textContent = t.number + " " + t.subject;
  document.getElementById("customer").textContent = t.customer;
  document.getElementById("priority").textContent = t.priority + (t.escalated ? " (escalated)" : "");
  document.getElementById("status").textContent = t.status;
  const ol = document.getElementById("replies");
  ol.textContent = "";
  for (const r of t.replies) { const li = document.createElement("li"); li.textContent = r; ol.append(li); }
}

// The page's own check: a person and an agent get the same message.
function reply(message) {
  const err = document.getElementById("reply-error");
  const m = (message || "").trim();
  if (m.length < 10) {
    err.textContent = "A reply needs at least 10 characters.";
    throw new Error("A reply needs at least 10 characters.");
  }
  err.textContent = "";
  hd.save(t, { replies: t.replies.concat([m]) });
  render();
}
document.getElementById("reply").onsubmit = (e) => {
  e.preventDefault();
  try { reply(document.getElementById("message").value); document.getElementById("message").value = ""; } catch (_) {}
};
function escalate(reason) {
  const err = document.getElementById("esc-error");
  if (!reason || reason.trim().length < 5) { err.textContent = "Say why, in a few words."; throw new Error("Say why, in a few words."); }
  hd.save(t, { escalated: true, priority: "urgent" });
  dialog.close();
  render();
}
document.getElementById("escalate").onclick = () => dialog.showModal();
document.getElementById("esc-ok").onclick = (e) => { e.preventDefault(); try { escalate(document.getElementById("esc-reason").value); } catch (_) {} };
document.getElementById("esc-cancel").onclick = () => dialog.close();
render();

pling.state("ticket.status", () => t.status);
pling.state("ticket.priority", () => t.priority);
pling.state("ticket.replies", () => t.replies.length, { description: "How many replies the ticket has" });
pling.guide({ target: "ticket.reply", label: "The reply box", selector: "#message" });
pling.action({
  id: "ticket.reply", title: "Reply to the customer",
  params: { message: { type: "string", required: true, description: "The reply, at least 10 characters", maxLength: 2000 } },
  available: () => t.status === "open" || "The ticket is closed",
  run: ({ message }) => { reply(message); return { replies: t.replies.length }; },
  expect: { state: "ticket.replies", change: "increase" },
});
pling.action({
  id: "ticket.setPriority", title: "Set the priority",
  params: { priority: { type: "string", required: true, enum: ["low", "normal", "high", "urgent"] } },
  run: ({ priority }) => { hd.save(t, { priority }); render(); return { priority }; },
  expect: { state: "ticket.priority", change: "any" },
});
pling.action({
  id: "ticket.escalate", title: "Open the escalation dialog",
  available: () => !t.escalated || "The ticket is escalated already",
  run: () => { dialog.showModal(); return true; },
});
pling.region({ id: "escalation", title: "Escalate to the second line", modal: true, active: () => dialog.open });
pling.action({
  id: "escalation.confirm", title: "Escalate", region: "escalation",
  params: { reason: { type: "string", required: true, description: "Why the second line should take it" } },
  run: ({ reason }) => { escalate(reason); return { priority: t.priority }; },
  expect: { state: "ticket.priority", equals: "urgent" },
});
pling.action({
  id: "escalation.cancel", title: "Cancel the escalation", region: "escalation", risk: "read",
  run: () => { dialog.close(); return true; },
});
