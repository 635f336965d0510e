package runtime

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"
)

// refuse gives what Handle gives the text a host refused unread: the same
// response bytes and the same audit record (docs/protocol.md §3.3 step 1).
func TestRefuse(t *testing.T) {
	tests := []struct {
		reason string
		text   string // text Handle refuses for reason
	}{
		{wire.ReasonTooLarge, `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","pad":"` + strings.Repeat("x", schema.MaxRequestBytes) + `"}`},
		{wire.ReasonInvalidUTF8, "{\"protocol\":\"pling.surface/0.1\",\"id\":\"r1\",\"method\":\"describe\",\"x\":\"\xff\"}"},
		// A lone surrogate written as WTF-8, as a JS string holds it.
		{wire.ReasonInvalidUTF8, "{\"protocol\":\"pling.surface/0.1\",\"id\":\"r1\",\"method\":\"describe\",\"x\":\"\xed\xa0\x80\"}"},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			handled, refused := newEnv(t), newEnv(t)
			want := handled.rt.Handle(context.Background(), []byte(tt.text))
			got := refused.rt.refuse(tt.reason)
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("refuse(%q) (-Handle +refuse):\n%s", tt.reason, diff)
			}
			if diff := cmp.Diff(handled.audit.Events(), refused.audit.Events()); diff != "" {
				t.Errorf("audit (-Handle +refuse):\n%s", diff)
			}
			if !strings.Contains(string(got), `"reason":"`+tt.reason+`"`) {
				t.Errorf("refuse(%q) = %s, want that reason", tt.reason, got)
			}
		})
	}
}

// A tool call text longer than MaxRequestBytes is refused as a request too
// large, unread, whatever it holds: a host judges it by length alone.
func TestCallToolTooLarge(t *testing.T) {
	big := strings.Repeat("x", schema.MaxRequestBytes+1)
	tests := []struct {
		name                     string
		session, tool, arguments string
	}{
		{"arguments that are JSON padded with spaces", "", "noop", "{}" + strings.Repeat(" ", schema.MaxRequestBytes)},
		{"arguments that are not JSON", "", "noop", big},
		{"arguments that are one large object", "", "noop", `{"note":"` + big + `"}`},
		{"a name", "", big, "{}"},
		{"a session", big, "noop", "{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			var ran atomic.Int64
			mustDeclare(t, e.rt, Action{ID: "noop", Title: "Noop", Params: map[string]Param{"note": {Type: "string"}}, Run: counter(&ran, nil)})
			got := e.rt.callTool(context.Background(), tt.session, tt.tool, tt.arguments)
			want := newEnv(t).rt.refuse(wire.ReasonTooLarge)
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("CallTool (-want +got):\n%s", diff)
			}
			if ran.Load() != 0 {
				t.Errorf("the handler ran")
			}
		})
	}
	t.Run("arguments at the limit are read", func(t *testing.T) {
		e := newEnv(t)
		mustDeclare(t, e.rt, Action{ID: "noop", Title: "Noop", Run: counter(new(atomic.Int64), nil)})
		got := e.rt.callTool(context.Background(), "", "noop", "{}"+strings.Repeat(" ", schema.MaxRequestBytes-2))
		if res := invokeResult(t, decodeResponse(t, got)); res.Error != nil {
			t.Errorf("CallTool = %s, want the call to run", got)
		}
	})
	t.Run("a session too large for Tools", func(t *testing.T) {
		_, err := newEnv(t).rt.tools(context.Background(), big)
		if diff := cmp.Diff(string(perr.SessionInvalid), codeOf(err)); diff != "" {
			t.Errorf("Tools (-want +got):\n%s", diff)
		}
	})
}
