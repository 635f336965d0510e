package wire

import (
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// FailureResponse is the ok:false response for a protocol error. The id is
// nil when the request id was unusable.
func FailureResponse(id *string, e *perr.Error) schema.SurfaceResponse {
	return schema.SurfaceResponse{
		Protocol: schema.Protocol,
		ID:       id,
		OK:       false,
		Error: &schema.SurfaceFailure{
			Code:         string(e.Code()),
			Message:      e.Message(),
			RetryAfterMs: e.RetryAfterMs(),
			Details:      e.Details(),
		},
	}
}

// ResultResponse is the ok:true response carrying result (a
// SurfaceDescription or a SurfaceInvokeResult).
func ResultResponse(id string, result any) (schema.SurfaceResponse, error) {
	b, err := schema.Encode(result)
	if err != nil {
		return schema.SurfaceResponse{}, err
	}
	return schema.SurfaceResponse{Protocol: schema.Protocol, ID: &id, OK: true, Result: b}, nil
}
