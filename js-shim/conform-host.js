// The Node conformance host: runs the module's fixture entry and speaks
// JSON lines on stdin/stdout, one command a line:
//   {"op":"load","page":"…"} → {"ok":true,"value":1}
//   {"op":"handle","page":1,"bytes":"<base64>"} → {"ok":true,"value":"…"}
// (a request travels as its exact bytes, which a JSON string could not
// hold when they are not UTF-8, and reaches the module as a Uint8Array)
// ops: load, handle, advance, calls, declare, dispose, callTool, close.
// Used by `pling conform --host node`.
"use strict";

const readline = require("readline");
const { loadModule } = require("./node.js");

const dir = process.argv[2] || require("path").join(__dirname, "..", "dist");
// The test module: only it has the fixture entry (make wasm builds both).
const file = process.argv[3] || "pling-conform.wasm";

loadModule(dir, file).then((bridge) => {
  const fx = bridge.fixture;
  const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
  out({ ok: true, value: "ready" });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on("line", (line) => {
    let cmd;
    try {
      cmd = JSON.parse(line);
    } catch (e) {
      return out({ ok: false, error: "bad command: " + e.message });
    }
    let v;
    try {
      switch (cmd.op) {
        case "load": v = fx.load(cmd.page); break;
        case "handle": v = fx.handle(cmd.page, "bytes" in cmd ? new Uint8Array(Buffer.from(cmd.bytes, "base64")) : cmd.text); break;
        case "advance": v = fx.advance(cmd.page, cmd.ms); break;
        case "calls": v = fx.calls(cmd.page); break;
        case "declare": v = fx.declare(cmd.page, cmd.text); break;
        case "dispose": v = fx.dispose(cmd.page, cmd.text); break;
        case "callTool": v = fx.callTool(cmd.page, cmd.text); break;
        case "close": v = fx.close(cmd.page); break;
        default: return out({ ok: false, error: "unknown op " + cmd.op });
      }
    } catch (e) {
      return out({ ok: false, error: String(e && e.message || e) });
    }
    if (v && typeof v === "object" && v.error) return out({ ok: false, error: v.error });
    out({ ok: true, value: v });
  });
  rl.on("close", () => process.exit(0));
}).catch((e) => {
  process.stderr.write(String(e && e.stack || e) + "\n");
  process.exit(1);
});
