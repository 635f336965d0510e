// Package runs lets the conformance fixture (internal/conform/fixture) read a
// runtime's run counts without their being public API: package runtime
// sets Of at init, and Go's internal rule keeps the package to runtime/....
package runs

// Of returns, for a *runtime.Runtime, how many invokes reached the run
// stage per base action id (a copy). Set by package runtime.
var Of func(rt any) map[string]int
