//go:build !plinggen

package wire

import "github.com/pling-go/pling/schema"

// The describe and invoke results written without encoding/json's
// reflection, byte for byte as schema.Encode writes them (the tests and
// FuzzAppendGenerated check them against encoding/json): a page's first
// describe otherwise builds encoding/json's reflection encoders for each of
// these types, and the engine compiles that code on its first run. The
// encoders are generated from the types' json tags (encode_gen.go), so a
// field added to a type is on the wire once `go generate ./...` has run,
// and `make check-generated` fails until it has.

// AppendDescription appends the JSON of d as schema.Encode writes it.
func AppendDescription(dst []byte, d *schema.SurfaceDescription) ([]byte, error) {
	return appendSurfaceDescription(dst, d)
}

// AppendCapability appends the JSON of c as schema.Encode writes it.
func AppendCapability(dst []byte, c *schema.SurfaceCapability) ([]byte, error) {
	return appendSurfaceCapability(dst, c)
}

// AppendRecordTemplate appends the JSON of t as schema.Encode writes it.
func AppendRecordTemplate(dst []byte, t *schema.RecordTemplate) ([]byte, error) {
	return appendRecordTemplate(dst, t)
}

// AppendContext appends the JSON of c as schema.Encode writes it.
func AppendContext(dst []byte, c *schema.SurfaceContext) ([]byte, error) {
	return appendSurfaceContext(dst, c)
}

// AppendInvokeResult appends the JSON of r as schema.Encode writes it. Values
// typed any (a handler's value, state values, details) are written by
// schema.AppendValue.
func AppendInvokeResult(dst []byte, r *schema.SurfaceInvokeResult) ([]byte, error) {
	return appendSurfaceInvokeResult(dst, r)
}
