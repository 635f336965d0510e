//go:build js

package jspattern

import "errors"

// Host compiles ForRegExp's source with the u flag in the host's own
// RegExp; the module sets it at start (wasm/pattern.go). A test that
// throws is no match.
var Host func(source string) (func(s string) bool, error)

// Compile compiles a pattern for repeated tests: in a GOOS=js build, by
// the host's RegExp (Host), after Check, so every host refuses the same
// patterns. Without a Host no pattern compiles: a value is never let
// through unchecked.
func Compile(p string) (func(s string) bool, error) {
	if err := Check(p); err != nil {
		return nil, err
	}
	if Host == nil {
		return nil, errors.New("cannot be checked here: the host gives no RegExp")
	}
	return Host(ForRegExp(p))
}
