// Package e2e holds the tests that cross hosts: the conformance suite
// (e2e/conformance, PLING.md §7.1) on every host that runs pling.wasm, with
// their responses compared byte for byte, and later the browser tests.
package e2e
