// Package jsonvalue reads and writes the plain JSON values of the Surface
// protocol (map[string]any, []any, string, json.Number, bool, nil), below
// package schema so that schema, the runtime and the module share one
// parser and one spelling: Parse (request text and text encoding/json
// wrote), Plain and PlainText (the one way a Go or JS value becomes plain
// JSON), and the pieces of schema.Encode's spelling that schema.AppendValue
// and the generated result encoders use.
package jsonvalue
