// The help desk's data: 1,000 tickets and 40 customers, the same on every
// load; what a person or an agent changes is kept in localStorage, so it
// holds across the site's pages.
(function () {
  const subjects = ["Printer jams on floor 2", "VPN drops every hour", "Invoice shows the wrong VAT", "Password reset mail never arrives",
    "Laptop fan is loud", "Cannot share the team calendar", "Refund not received", "Shipping label is blank",
    "Two-factor code rejected", "Export to CSV times out", "Wrong delivery address", "App crashes on login",
    "Duplicate charge on card", "Missing items in order", "Dark mode unreadable", "Slow search results",
    "Webhook retries forever", "Cannot invite a colleague", "Trial ended too early", "PDF receipt is empty"];
  const names = ["Rosa Rossi", "Ada Byron", "Tomás Lind", "Mei Chen", "Omar Haddad", "Lena Vogel", "Ines Duarte", "Kofi Mensah",
    "Yuki Sato", "Priya Nair", "Jonas Berg", "Sara Cohen", "Luca Bianchi", "Nora Eriksen", "Ravi Kumar", "Amara Obi",
    "Hugo Martin", "Elif Kaya", "Pablo Ruiz", "Zoe Clarke", "Ivan Petrov", "Maya Levi", "Finn Walsh", "Chloe Dubois",
    "Noah Fischer", "Aisha Bello", "Leo Novak", "Mila Horvat", "Sven Olsen", "Lucia Romano", "Kenji Ito", "Dara Kim",
    "Felix Wagner", "Iris Jansen", "Oscar Silva", "Vera Smirnova", "Emil Nowak", "Hana Suzuki", "Theo Laurent", "Ana Costa"];
  const prios = ["low", "normal", "normal", "high", "urgent"];
  const store = {
    get(k, d) { try { const v = localStorage.getItem("hd." + k); return v === null ? d : JSON.parse(v); } catch (_) { return d; } },
    set(k, v) { localStorage.setItem("hd." + k, JSON.stringify(v)); },
  };
  const customers = names.map((n, i) => ({ id: "c" + (i + 1), name: n, email: n.toLowerCase().replace(/[^a-z]+/g, ".") + "@example.com" }))
    .concat(store.get("customers.added", []));
  const changes = store.get("tickets", {});
  const tickets = [];
  for (let i = 0; i < 1000; i++) {
    const n = 1001 + i;
    const t = { id: "t" + n, number: "T-" + n, subject: subjects[(i * 7) % subjects.length], customer: customers[i % 40].name,
      priority: prios[(i * 3) % prios.length], status: i % 3 === 0 ? "closed" : "open", replies: [] };
    Object.assign(t, changes[t.id] || {});
    tickets.push(t);
  }
  const byId = new Map(tickets.map((t) => [t.id, t]));
  window.helpdesk = {
    tickets, customers, byId, store,
    label(t) { return t.number + " · " + t.subject + " · " + t.customer; },
    save(t, patch) {
      Object.assign(t, patch);
      const all = store.get("tickets", {});
      all[t.id] = Object.assign(all[t.id] || {}, patch);
      store.set("tickets", all);
    },
    settings() { return Object.assign({ teamName: "Support", slaHours: 24, signature: "The support team", autoClose: true }, store.get("settings", {})); },
  };
})();
