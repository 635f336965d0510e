// The ticket list: search, 25 rows a page, a close button per open row.
const hd = window.helpdesk;
const perPage = 25;
let query = "", page = 1;

const matches = () => {
  const q = query.trim().toLowerCase();
  return q === "" ? hd.tickets : hd.tickets.filter((t) => hd.label(t).toLowerCase().includes(q));
};
const pages = () => Math.max(1, Math.ceil(matches().length / perPage));
const shown = () => matches().slice((page - 1) * perPage, page * perPage);

function render() {
  const rows = document.getElementById("rows");
  rows.textContent = "";
  for (const t of shown()) {
    const tr = document.createElement("tr");
    tr.innerHTML = `<td><a href="/tickets/view.html?id=${t.id}"></a></td><td></td><td></td><td></td><td></td><td></td>`;
    tr.cells[0].firstChild.textContent = t.number;
    tr.cells[1].textContent = t.subject;
    tr.cells[2].textContent = t.customer;
    tr.cells[3].textContent = t.priority;
    tr.cells[4].textContent = t.status;
    if (t.status === "open") {
      const b = document.createElement("button");
      b.textContent = "Close";
      b.setAttribute("aria-label", "Close ticket " + t.number);
      b.onclick = () => close(t);
      tr.cells[5].append(b);
    }
    rows.append(tr);
  }
  document.getElementById("counts").textContent = `${matches().length} tickets match, ${openCount()} open in all`;
  document.getElementById("pageinfo").textContent = `Page ${page} of ${pages()}`;
  document.getElementById("prev").disabled = page <= 1;
  document.getElementById("next").disabled = page >= pages();
}

const openCount = () => hd.tickets.filter((t) => t.status === "open").length;
function close(t) { hd.save(t, { status: "closed" }); render(); }
function search(q) { query = q; page = 1; document.getElementById("q").value = q; render(); }
function go(n) { page = Math.min(Math.max(1, n), pages()); render(); }

document.getElementById("search").onsubmit = (e) => { e.preventDefault(); search(document.getElementById("q").value); };
document.getElementById("prev").onclick = () => go(page - 1);
document.getElementById("next").onclick = () => go(page + 1);
render();

pling.state("tickets.open", openCount, { description: "How many tickets are open" });
pling.state("tickets.query", () => query, { description: "The search in effect" });
pling.state("tickets.page", () => ({ page, of: pages(), matches: matches().length }), { description: "The page of results shown" });
pling.records("ticket", () => {
  const visible = new Set(shown().map((t) => t.id));
  return hd.tickets.map((t) => ({ id: t.id, label: hd.label(t), visible: visible.has(t.id) }));
});
pling.action({
  id: "tickets.search", title: "Search tickets", risk: "read",
  description: "Shows the tickets whose number, subject or customer contains the text (an empty text shows all)",
  params: { query: { type: "string", description: "Text to look for, e.g. T-1042 or a customer's name", maxLength: 100 } },
  run: ({ query }) => { search(query || ""); return { matches: matches().length, pages: pages() }; },
  expect: { state: "tickets.query", change: "any" },
});
pling.action({
  id: "tickets.page", title: "Show a page of results", risk: "read",
  params: { page: { type: "integer", required: true, minimum: 1 } },
  available: () => pages() > 1 || "All results fit on one page",
  run: ({ page: n }) => { go(n); return { page, of: pages() }; },
});
pling.action({
  id: "close", title: "Close the ticket", record: { kind: "ticket" },
  description: "Marks an open ticket closed",
  available: (id) => !id || hd.byId.get(id)?.status === "open" || "The ticket is already closed",
  run: ({ record }) => { close(hd.byId.get(record)); return { ticket: hd.byId.get(record).number, status: "closed" }; },
  expect: { state: "tickets.open", change: "decrease" },
});
pling.action({
  id: "open", title: "Open the ticket's page", risk: "read", record: { kind: "ticket" },
  description: "Goes to the ticket's own page, with its replies, priority and escalation",
  run: ({ record }) => { location.href = "/tickets/view.html?id=" + encodeURIComponent(record); return true; },
});
