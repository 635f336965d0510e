//go:build js && wasm

package main

import (
	"fmt"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema/pagespec"
)

// What a page sends as JSON text (its configuration and its action,
// state, guide, region and records declarations) is read with the
// one-pass parser and the decoders generated in package pagespec from
// the types' json tags, without encoding/json's reflection: by the exact
// json names, a member spelled in another case refused (RATIONALE.md
// "How does the module read a page's configuration?" and "Why are
// declarations read by generated decoders only?").

// decodeSpecDepth is the deepest nesting decodeSpec reads: encoding/json's
// own bound, so what json.Unmarshal read before is still read.
const decodeSpecDepth = 10000

// actionOf reads the JSON text of pling.action()'s data into the
// runtime's declaration, with the functions in fns.
func actionOf(text string, fns safejs.Value) (runtime.Action, error) {
	a, err := decodeSpec(text, pagespec.DecodeAction)
	if err != nil {
		return runtime.Action{}, fmt.Errorf("pling.action: %w", err)
	}
	return toAction(&a, fns)
}

// decodeSpec reads what a page sends as JSON text with the decoder
// generated for its type in package pagespec.
func decodeSpec[T any](text string, decode func(any) (T, error)) (T, error) {
	v, err := jsonvalue.Parse([]byte(text), decodeSpecDepth)
	if err != nil {
		var zero T
		return zero, err
	}
	return decode(v)
}
