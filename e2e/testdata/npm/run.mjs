// @pling/page as ESM in Node: run an action through the packaged module,
// and find the assets a page serves through the package's exports.
import { loadPling } from "@pling/page";
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const pling = loadPling({ expose: ["*"] });
pling.action({ id: "hello", title: "Say hello", params: { name: { type: "string", required: true } }, run: ({ name }) => "hi " + name });
const res = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "npm-1", method: "invoke", capability: "hello", input: { name: "npm" } });
const assets = {};
for (const f of ["pling.wasm", "wasm_exec.js", "pling.js", "stub.js", "ui.js", "webmcp.js"]) {
  assets[f] = existsSync(fileURLToPath(import.meta.resolve("@pling/page/" + f)));
}
const cjs = typeof createRequire(import.meta.url)("@pling/page").loadPling;
process.stdout.write(JSON.stringify({ ok: res.ok, value: res.result && res.result.value, assets, cjs }));
process.exit(0);
