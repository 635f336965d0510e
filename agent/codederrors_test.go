package agent_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
)

// TestCodedErrorsIsAndAs: the client's coded errors match a registry
// error or one of their own type by code alone, never another type with
// the same code, and give their registry value to errors.As.
func TestCodedErrorsIsAndAs(t *testing.T) {
	const code, other = perr.RateLimited, perr.ActionNotFound
	tests := []struct {
		name             string
		err, same, wrong error // wrong: another type with the same code
	}{
		{"ProtocolError", &agent.ProtocolError{Code: code, Message: "a", RetryAfterMs: 7}, &agent.ProtocolError{Code: code, Message: "b"}, &agent.BusinessError{Code: code}},
		{"BusinessError", &agent.BusinessError{Code: code, Message: "a"}, &agent.BusinessError{Code: code, Message: "b"}, &agent.TaskError{Code: code}},
		{"TaskError", &agent.TaskError{Code: code, Message: "a", RetryAfterMs: 7}, &agent.TaskError{Code: code, Message: "b"}, &agent.ProtocolError{Code: code}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct{ Registry, OtherCode, Same, OwnOtherCode, NilOwn, OtherType bool }
			var nilOwn error
			switch tt.err.(type) {
			case *agent.ProtocolError:
				nilOwn = (*agent.ProtocolError)(nil)
			case *agent.BusinessError:
				nilOwn = (*agent.BusinessError)(nil)
			case *agent.TaskError:
				nilOwn = (*agent.TaskError)(nil)
			}
			ownOther := map[string]error{"ProtocolError": &agent.ProtocolError{Code: other}, "BusinessError": &agent.BusinessError{Code: other}, "TaskError": &agent.TaskError{Code: other}}[tt.name]
			got := result{
				Registry:     errors.Is(tt.err, perr.New(code, "", nil)),
				OtherCode:    errors.Is(tt.err, perr.New(other, "", nil)),
				Same:         errors.Is(tt.err, tt.same),
				OwnOtherCode: errors.Is(tt.err, ownOther),
				NilOwn:       errors.Is(tt.err, nilOwn),
				OtherType:    errors.Is(tt.err, tt.wrong),
			}
			if diff := cmp.Diff(result{Registry: true, Same: true}, got); diff != "" {
				t.Errorf("errors.Is (-want +got):\n%s", diff)
			}
			var p *perr.Error
			if !errors.As(tt.err, &p) || p.Code() != code || p.Message() != "a" {
				t.Errorf("errors.As: %v", p)
			}
		})
	}
}
