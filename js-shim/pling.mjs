// The ES module entry of the npm package, for pages (docs/page-api.md §7):
//
//   import { pling } from "@pling/page";
//   pling.configure({ expose: ["*"], assets: "/static/pling/" });
//
// It runs pling.js, which defines window.pling; assets is the URL where
// pling.wasm, wasm_exec.js, ui.js and webmcp.js are served (default
// /pling/). In Node the package's "node" entry (node.mjs) is used instead.
import "./pling.js";

export const pling = globalThis.pling;
