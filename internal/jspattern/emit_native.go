//go:build !js

package jspattern

// emitRegexp2: outside the module patterns are evaluated by regexp2, so
// the parser writes Regexp2's rewrite.
const emitRegexp2 = true
