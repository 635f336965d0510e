// The in-page assistant: a small chat panel that sends the conversation
// and the page's model tools (pling.tools()) to the model gateway behind
// /gateway/ (pling serve --gateway URL), runs the tool calls the model
// answers with through pling.callTool — the whole Surface path, gate
// included — sends the results back, and shows the model's answer. It
// appears only when the site has a gateway. Model text is untrusted: it
// is only ever set as textContent.
(function () {
  "use strict";
  var base = "/gateway/v1";
  var maxSteps = 8; // model turns per question, tool rounds included
  var messages = [{ role: "system", content: "You are the assistant of this web page. Use the tools to act on the page for the person, then answer briefly." }];
  var log, input, send, model;

  function line(kind, text) {
    var li = document.createElement("li");
    li.className = "assistant-msg " + kind;
    li.textContent = text;
    log.appendChild(li);
    log.scrollTop = log.scrollHeight;
    return li;
  }

  function modelTools() {
    return pling.tools().then(function (tools) {
      return tools.map(function (t) {
        return { type: "function", function: { name: t.name, description: t.description || "", parameters: t.parameters } };
      });
    });
  }

  function complete(tools) {
    return fetch(base + "/chat/completions", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: model, messages: messages, tools: tools.length ? tools : undefined }),
    }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (body) {
        if (!res.ok || !body || !body.choices || !body.choices.length) {
          var e = body && body.error;
          throw new Error((e && e.message ? e.message : "The gateway answered " + res.status) + (e && e.code ? " (" + e.code + ")" : ""));
        }
        return body.choices[0].message;
      });
    });
  }

  // step asks the model once; tool calls are run in order and their
  // results sent back, until the model answers in words.
  function step(n) {
    if (n >= maxSteps) { line("error", "The assistant stopped after " + maxSteps + " steps."); return Promise.resolve(); }
    return modelTools().then(complete).then(function (msg) {
      var calls = msg.tool_calls || [];
      messages.push({ role: "assistant", content: msg.content || null, tool_calls: calls.length ? calls : undefined });
      if (!calls.length) { line("assistant", msg.content || ""); return; }
      return calls.reduce(function (p, call) {
        return p.then(function () {
          var shown = line("tool", call.function.name + " …");
          return pling.callTool(call.function.name, call.function.arguments || "{}").then(function (res) {
            var r = res && res.ok ? res.result : res;
            var failed = !res || !res.ok || (r && r.error);
            shown.textContent = call.function.name + (failed ? " failed" : " done");
            messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(res) });
          });
        });
      }, Promise.resolve()).then(function () { return step(n + 1); });
    });
  }

  function ask(text) {
    messages.push({ role: "user", content: text });
    line("user", text);
    send.disabled = true;
    return step(0).catch(function (e) { line("error", String(e && e.message || e)); }).then(function () {
      send.disabled = false;
      input.focus();
    });
  }

  function build() {
    var panel = document.createElement("aside");
    panel.id = "assistant";
    panel.className = "card assistant-panel";
    panel.setAttribute("aria-label", "Assistant");
    var h = document.createElement("h2");
    h.textContent = "Assistant";
    log = document.createElement("ol");
    log.id = "assistant-log";
    log.setAttribute("aria-live", "polite");
    var form = document.createElement("form");
    form.id = "assistant-form";
    input = document.createElement("input");
    input.id = "assistant-input";
    input.placeholder = "Ask the assistant…";
    input.setAttribute("aria-label", "Message to the assistant");
    input.maxLength = 2000;
    send = document.createElement("button");
    send.type = "submit";
    send.textContent = "Send";
    form.append(input, send);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var text = input.value.trim();
      if (!text || send.disabled) return;
      input.value = "";
      ask(text);
    });
    panel.append(h, log, form);
    document.body.appendChild(panel);
  }

  if (!window.pling) return;
  fetch(base + "/models").then(function (res) { return res.ok ? res.json() : null; }).then(function (list) {
    if (!list || !list.data || !list.data.length) return; // no gateway: no panel
    model = list.data[0].id;
    build();
  }).catch(function () {});
})();
