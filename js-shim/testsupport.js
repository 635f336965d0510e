// Test support for the Node tests of the shim (test/): the module each
// test file loads for itself from the built dist/, and the surface
// requests it sends. Not part of the npm package (package.json "files").
"use strict";

const path = require("path");
const { loadPling } = require("./node.js");

// dist is the directory make wasm fills; PLING_DIST names another.
const dist = process.env.PLING_DIST || path.join(__dirname, "..", "dist");

// load loads the module from dist with opts, which expose every action
// unless they say otherwise.
function load(opts) {
  return loadPling(Object.assign({ dir: dist, expose: ["*"] }, opts));
}

// requests are one test file's surface requests to pling: req(method,
// extra) with the ids prefix1, prefix2, …, invoke(capability, input), and
// lastID(), the id of the latest request.
function requests(pling, prefix) {
  let n = 0;
  const req = (method, extra) => Object.assign({ protocol: "pling.surface/0.1", id: prefix + ++n, method }, extra);
  const invoke = (capability, input) => pling.surface.handle(req("invoke", { capability, input }));
  const lastID = () => prefix + n;
  return { req, invoke, lastID };
}

module.exports = { dist, load, requests };
