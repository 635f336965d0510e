package schema

import (
	"bytes"
	"encoding/json"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/jsonvalue"
)

// Encode writes v as compact JSON, deterministically: struct fields in
// declaration order, map keys sorted, no HTML escaping, no trailing newline.
// The same value gives the same bytes on every host.
func Encode(v any) ([]byte, error) {
	// What a handler usually returns is written without the encoder's
	// reflection, byte for byte as the encoder writes it.
	switch x := v.(type) {
	case nil:
		return []byte("null"), nil
	case bool:
		if x {
			return []byte("true"), nil
		}
		return []byte("false"), nil
	case string:
		return jsonvalue.AppendQuoted(make([]byte, 0, len(x)+2), x, false), nil
	}
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
