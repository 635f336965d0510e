package runtime

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/schema"
)

// TestAnonymousExposure pins who an anonymous caller (no session in the
// request) may reach: with a verifier configured, nothing unless
// WithAnonymous says so, so dropping a narrow token never widens what a
// caller reaches; without a verifier, the site allowlist. describe lists
// exactly what invoke lets through, and Tools agrees.
func TestAnonymousExposure(t *testing.T) {
	verifier := WithSessions(sessions(map[string]schema.SurfaceSession{
		"narrow": {Subject: "a", Scope: []string{"cart.add"}, ExpiresAtMs: 1 << 40},
	}), false)
	ids := []string{"admin.wipe", "cart.add", "cart.remove"}
	tests := []struct {
		name    string
		opts    []Option
		session string
		want    []string // the capabilities describe lists and invoke runs
	}{
		{"no verifier: anonymous keeps the site allowlist", nil, "", ids},
		{"no verifier, WithAnonymous narrows", []Option{WithAnonymous("cart.*")}, "", []string{"cart.add", "cart.remove"}},
		{"no verifier, WithAnonymous() exposes nothing", []Option{WithAnonymous()}, "", []string{}},
		{"verifier: the narrow token", []Option{verifier}, "narrow", []string{"cart.add"}},
		{"verifier: dropping the token does not widen scope", []Option{verifier}, "", []string{}},
		{"verifier and WithAnonymous", []Option{verifier, WithAnonymous("cart.remove")}, "", []string{"cart.remove"}},
		{"WithAnonymous before the verifier", []Option{WithAnonymous("cart.remove"), verifier}, "", []string{"cart.remove"}},
		{"anonymous ∩ site allowlist", []Option{verifier, WithAnonymous("*")}, "", ids},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, append([]Option{WithExpose("*")}, tt.opts...)...)
			for _, id := range ids {
				mustDeclare(t, e.rt, Action{ID: id, Title: id})
			}
			if diff := cmp.Diff(tt.want, capIDs(e.describe(tt.session))); diff != "" {
				t.Errorf("describe (-want +got):\n%s", diff)
			}
			ran := []string{}
			for _, id := range ids {
				req := e.invokeReq(id, nil)
				if tt.session != "" {
					req["session"] = tt.session
				}
				resp, _ := e.send(req)
				switch got := outcome(t, resp); got {
				case "ok":
					ran = append(ran, id)
				case "protocol:CAPABILITY_NOT_EXPOSED":
				default:
					t.Errorf("invoke %s: %s", id, got)
				}
			}
			if diff := cmp.Diff(tt.want, ran); diff != "" {
				t.Errorf("invoke ran (-want +got):\n%s", diff)
			}
			tools, err := e.rt.tools(context.Background(), tt.session)
			if err != nil {
				t.Fatal(err)
			}
			caps := []string{}
			for _, tl := range tools {
				caps = append(caps, tl.Capability)
			}
			if diff := cmp.Diff(tt.want, caps); diff != "" {
				t.Errorf("Tools (-want +got):\n%s", diff)
			}
		})
	}
}
