//go:build js

package jspattern

// emitRegexp2: the module hands patterns to the host's RegExp, so it only
// checks them and writes no rewrite.
const emitRegexp2 = false
