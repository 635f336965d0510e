// Customers: the list and a form whose checks this script makes.
const hd = window.helpdesk;
function render() {
  const rows = document.getElementById("rows");
  rows.textContent = "";
  for (const c of hd.customers) {
    const tr = document.createElement("tr");
    tr.innerHTML = "<td></td><td></td><td></td>";
    tr.cells[0].textContent = c.name;
    tr.cells[1].textContent = c.email;
    tr.cells[2].textContent = hd.tickets.filter((t) => t.customer === c.name && t.status === "open").length;
    rows.append(tr);
  }
}
function add(name, email) {
  const err = document.getElementById("add-error");
  name = (name || "").trim(); email = (email || "").trim();
  let why = "";
  if (name.length < 2) why = "Give the customer's full name.";
  else if (!/^[^@\s]+@[^@\s]+\.[a-z]{2,}$/i.test(email)) why = "That email address does not look right.";
  else if (hd.customers.some((c) => c.email.toLowerCase() === email.toLowerCase())) why = "A customer with that email exists already.";
  err.textContent = why;
  if (why) throw new Error(why);
  const c = { id: "c" + (hd.customers.length + 1), name, email };
  hd.customers.push(c);
  hd.store.set("customers.added", hd.store.get("customers.added", []).concat([c]));
  render();
  return c;
}
document.getElementById("add").onsubmit = (e) => {
  e.preventDefault();
  try { add(document.getElementById("name").value, document.getElementById("email").value); } catch (_) {}
};
render();

pling.state("customers.count", () => hd.customers.length);
pling.records("customer", () => hd.customers.map((c) => ({ id: c.id, label: c.name + " <" + c.email + ">" })));
pling.action({
  id: "customers.add", title: "Add a customer",
  params: {
    name: { type: "string", required: true, description: "Full name" },
    email: { type: "string", required: true, description: "Email address" },
  },
  run: ({ name, email }) => add(name, email),
  expect: { state: "customers.count", change: "increase" },
});
