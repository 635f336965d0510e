// Package e2e holds the tests that cross hosts: the conformance suite
// (e2e/conformance, PLING.md §7.1) on every host that runs pling.wasm, with
// their responses compared byte for byte, and the browser tests
// (browser_test.go): the demo site of pling serve in headless Chromium, an
// agent driving it through pling.surface.handle while the test clicks the
// page and the Pling overlay like a person.
package e2e
