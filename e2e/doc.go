// Package e2e holds the tests that cross hosts: the conformance suite
// (e2e/conformance, docs/protocol.md §7.1) on every host that runs the module,
// with their responses compared byte for byte (hosts_test.go), the
// browser tests (browser_test.go): the demo site of pling serve in
// headless Chromium, an agent driving it through pling.surface.handle
// while the test clicks the page and the Pling overlay like a person, and
// the npm MCP client against pling mcp (npm_test.go).
//
// The code those tests and the benchmarks share is kept out of the
// runtime's dependency tree: the conformance runner and its hosts
// (native, wazero, Node, Chromium) are in internal/conform, which pling
// conform uses too; the test rigs (a PostgreSQL cluster, an authority on
// loopback, browser processes, the required parts of the machine) are in
// internal/testing; the benchmarks are the command e2e/cmd/pling-bench
// (make bench-hosts, make bench-browser, …).
//
// The wazero, Node and Chromium hosts load pling-conform.wasm, the test
// module with the fixture entry; the browser tests load the shipped
// pling.wasm, which has none.
package e2e
