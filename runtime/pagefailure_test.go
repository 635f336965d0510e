package runtime

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/schema"
)

// TestPageFailure: a handler's business failure (pling.fail) is a
// business result (ok:true, result.error) with the page's code and
// message; INVALID_PARAMS names the parameters as the runtime's own
// violations do; a code a handler cannot give is EXECUTION_FAILED and
// the author is warned.
func TestPageFailure(t *testing.T) {
	tests := []struct {
		name    string
		code    string
		message string
		details map[string]any
		want    schema.ActionFailure
		warns   bool
	}{
		{"invalid params with a path", "INVALID_PARAMS", "Board name is too short", map[string]any{"path": "name"},
			schema.ActionFailure{Code: "INVALID_PARAMS", Message: "Board name is too short",
				Details: map[string]any{"violations": []any{map[string]any{"path": "/name", "reason": "Board name is too short"}}}}, false},
		{"invalid params with violations", "INVALID_PARAMS", "Two fields are wrong",
			map[string]any{"violations": []any{map[string]any{"path": "/a", "reason": "is taken"}, map[string]any{"path": "/b"}}},
			schema.ActionFailure{Code: "INVALID_PARAMS", Message: "Two fields are wrong",
				Details: map[string]any{"violations": []any{map[string]any{"path": "/a", "reason": "is taken"}, map[string]any{"path": "/b", "reason": "Two fields are wrong"}}}}, false},
		{"permission denied drops details", "PERMISSION_DENIED", "Only admins may close boards", map[string]any{"secret": "x"},
			schema.ActionFailure{Code: "PERMISSION_DENIED", Message: "Only admins may close boards"}, false},
		{"action unavailable", "ACTION_UNAVAILABLE", "The ticket is already closed", nil,
			schema.ActionFailure{Code: "ACTION_UNAVAILABLE", Message: "The ticket is already closed"}, false},
		{"a runtime code", "LOOP_DETECTED", "nope", nil,
			schema.ActionFailure{Code: "EXECUTION_FAILED", Message: "nope"}, true},
		{"an unknown code", "BAD_THING", "nope", nil,
			schema.ActionFailure{Code: "EXECUTION_FAILED", Message: "nope"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			var warning string
			mustDeclare(t, e.rt, Action{ID: "board.save", Title: "Save", Run: func(context.Context, *Call) (any, error) {
				w, err := pageFailure(tt.code, tt.message, tt.details)
				warning = w
				return nil, err
			}})
			if diff := cmp.Diff(tt.want, e.invokeFailure(t, "board.save")); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if (warning != "") != tt.warns {
				t.Errorf("warning %q, want one: %v", warning, tt.warns)
			}
		})
	}
}
