// The settings page's own behaviour: validate and save the form, run the
// invite dialog. It never calls Pling: everything an agent may do here is
// declared with data-pling-* markup in index.html, and errors shown in
// role=alert elements reach the agent as feedback.
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var form = $("settings"), invite = $("invite"), inviteForm = $("invite-form");
  var emailRe = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var f = form.elements, name = f.displayName.value.trim(), email = f.email.value.trim(), size = Number(f.pageSize.value);
    var problem =
      !name ? "Enter a display name" :
      /^(admin|root)$/i.test(name) ? "“" + name + "” is reserved; choose another display name" :
      !emailRe.test(email) ? "Enter a valid email address" :
      !(size >= 10 && size <= 100 && size % 10 === 0) ? "Orders per page must be 10 to 100, in steps of 10" : "";
    $("settings-status").textContent = "";
    $("settings-alert").textContent = problem;
    if (problem) return;
    $("p-name").textContent = name;
    $("p-email").textContent = email;
    $("p-language").textContent = f.language.value;
    document.documentElement.lang = f.language.value;
    var rev = document.querySelector('[data-pling-state="settings.revision"]');
    rev.textContent = String(Number(rev.textContent) + 1);
    $("settings-status").textContent = "Settings saved";
  });

  $("invite-open").addEventListener("click", function () {
    inviteForm.reset();
    $("invite-alert").textContent = "";
    invite.showModal();
  });
  $("invite-cancel").addEventListener("click", function () { invite.close(); });

  inviteForm.addEventListener("submit", function (e) {
    e.preventDefault();
    var email = inviteForm.elements.email.value.trim().toLowerCase(), role = inviteForm.elements.role.value;
    var taken = [].some.call($("team-list").querySelectorAll("li > span:first-child"), function (s) { return s.textContent === email; });
    var problem = !emailRe.test(email) ? "Enter a valid email address" : taken ? email + " is already on the team" : "";
    $("invite-alert").textContent = problem;
    if (problem) return;
    var li = document.createElement("li");
    li.innerHTML = "<span></span><span class=pill></span>";
    li.firstChild.textContent = email;
    li.lastChild.textContent = role;
    $("team-list").appendChild(li);
    $("team-count").textContent = String($("team-list").children.length);
    invite.close();
  });
})();
