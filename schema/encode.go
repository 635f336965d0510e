package schema

import (
	"bytes"
	"encoding/json"

	perr "github.com/pling-go/pling/errors"
)

// Encode writes v as compact JSON, deterministically: struct fields in
// declaration order, map keys sorted, no HTML escaping, no trailing newline.
// The same value gives the same bytes on every host.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// FailureResponse is the ok:false response for a protocol error. The id is
// nil when the request id was unusable.
func FailureResponse(id *string, e *perr.Error) SurfaceResponse {
	return SurfaceResponse{
		Protocol: Protocol,
		ID:       id,
		OK:       false,
		Error: &SurfaceFailure{
			Code:         string(e.Code()),
			Message:      e.Message(),
			RetryAfterMs: e.RetryAfterMs(),
			Details:      e.Details(),
		},
	}
}

// ResultResponse is the ok:true response carrying result (a
// SurfaceDescription or a SurfaceInvokeResult).
func ResultResponse(id string, result any) (SurfaceResponse, error) {
	b, err := Encode(result)
	if err != nil {
		return SurfaceResponse{}, err
	}
	return SurfaceResponse{Protocol: Protocol, ID: &id, OK: true, Result: b}, nil
}
