//go:build js && wasm

package main

import (
	"errors"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/internal/jspattern"
)

// initPattern gives the runtime the host's own RegExp for JSON Schema's
// pattern: an ECMA-262 expression, which a browser, Node and the wazero
// host (wasm/gojs) each evaluate, so the module carries no regular
// expression engine. The constructor is read once, at start.
func initPattern() {
	ctor, err := global.Get("RegExp")
	if err != nil || ctor.Type() != safejs.TypeFunction {
		return // jspattern.Compile refuses every pattern without it
	}
	jspattern.Host = func(source string) (func(string) bool, error) {
		re, err := ctor.New(source, "u")
		if err != nil {
			return nil, errors.New("is not a valid regular expression")
		}
		return func(s string) bool {
			v, err := re.Call("test", s)
			if err != nil {
				return false
			}
			ok, err := v.Bool()
			return err == nil && ok
		}, nil
	}
}
