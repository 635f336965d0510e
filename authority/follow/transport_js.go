//go:build js

package follow

// defaultTransport is none on js/wasm: the page module passes one over
// the browser's fetch (net/http would weigh on the module).
func defaultTransport() Transport { return nil }
