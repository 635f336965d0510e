// Settings: a form whose inputs are all prefilled and required.
const hd = window.helpdesk;
const form = document.getElementById("settings");
let current = hd.settings();
for (const k of ["teamName", "slaHours", "signature"]) form.elements[k].value = current[k];
form.onsubmit = (e) => {
  e.preventDefault();
  current = Object.assign(current, { teamName: form.elements.teamName.value, slaHours: +form.elements.slaHours.value, signature: form.elements.signature.value });
  hd.store.set("settings", current);
  document.getElementById("saved").textContent = "Saved.";
};
pling.state("settings", () => ({ teamName: current.teamName, slaHours: current.slaHours, signature: current.signature }),
  { description: "The saved settings" });
