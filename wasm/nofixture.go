//go:build js && wasm && !plingfixture

package main

import "github.com/hack-pad/safejs"

// setTestEntries adds nothing: the shipped module has no conformance
// entry (fixture.go, built with -tags plingfixture, has it).
func setTestEntries(safejs.Value) error { return nil }
