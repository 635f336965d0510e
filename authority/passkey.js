// The authority's screens' one script: it asks the browser for the
// passkey the form's options name (registration on the passkeys screen,
// an assertion on the approval screen) and sends the credential's JSON
// in the form. The authority verifies everything; this only carries.
(() => {
  const show = (msg) => {
    const p = document.getElementById("passkey-problem");
    if (p) { p.textContent = msg; p.hidden = false; }
  };
  const run = async (form, create, opts) => {
    const PKC = window.PublicKeyCredential;
    const cred = create
      ? await navigator.credentials.create({ publicKey: PKC.parseCreationOptionsFromJSON(opts) })
      : await navigator.credentials.get({ publicKey: PKC.parseRequestOptionsFromJSON(opts) });
    form.elements[create ? "credential" : "assertion"].value = JSON.stringify(cred.toJSON());
    if (!create) {
      const d = document.createElement("input");
      d.type = "hidden"; d.name = "decision"; d.value = "approve";
      form.appendChild(d);
    }
    form.submit();
  };
  for (const form of document.querySelectorAll("form[data-passkey-create],form[data-passkey-get]")) {
    const create = form.hasAttribute("data-passkey-create");
    const opts = JSON.parse(form.getAttribute(create ? "data-passkey-create" : "data-passkey-get"));
    form.addEventListener("submit", (e) => {
      if (!create && !(e.submitter && e.submitter.value === "approve")) return;
      e.preventDefault();
      run(form, create, opts).catch((err) => show("Your passkey did not answer (" + err.name + "): nothing was sent."));
    });
  }
})();
