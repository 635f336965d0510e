// The ES module entry of the npm package in Node: the same loadPling as
// node.js (docs/page-api.md §6).
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const node = require("./node.js");

export const loadPling = node.loadPling;
export const loadModule = node.loadModule;
