// The authority's screens' one script: it asks the browser for the
// passkeys the form's options name (an assertion on the approval screen,
// and on the passkeys screen one of the person's passkeys, when they
// have one, then the new one) and sends the credentials' JSON in the
// form. The authority verifies everything; this only carries.
(() => {
  const show = (msg) => {
    const p = document.getElementById("passkey-problem");
    if (p) { p.textContent = msg; p.hidden = false; }
  };
  const run = async (form, create, get) => {
    const PKC = window.PublicKeyCredential;
    if (get) {
      const a = await navigator.credentials.get({ publicKey: PKC.parseRequestOptionsFromJSON(get) });
      form.elements.assertion.value = JSON.stringify(a.toJSON());
    }
    if (create) {
      const c = await navigator.credentials.create({ publicKey: PKC.parseCreationOptionsFromJSON(create) });
      form.elements.credential.value = JSON.stringify(c.toJSON());
    } else {
      const d = document.createElement("input");
      d.type = "hidden"; d.name = "decision"; d.value = "approve";
      form.appendChild(d);
    }
    form.submit();
  };
  for (const form of document.querySelectorAll("form[data-passkey-create],form[data-passkey-get]")) {
    const opts = (a) => (form.hasAttribute(a) ? JSON.parse(form.getAttribute(a)) : null);
    const create = opts("data-passkey-create"), get = opts("data-passkey-get");
    form.addEventListener("submit", (e) => {
      if (!create && !(e.submitter && e.submitter.value === "approve")) return;
      e.preventDefault();
      run(form, create, get).catch((err) => show("Your passkey did not answer (" + err.name + "): nothing was sent."));
    });
  }
})();
