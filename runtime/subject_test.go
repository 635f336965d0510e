package runtime

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/pling-go/pling/schema"
)

// TestSessionSubjectMustMatchSignedIn: with WithSubject, a session whose
// subject is not the person signed in on the site (Bob's token in Alice's
// browser), or any session while nobody is signed in or the hook fails,
// is refused with SESSION_INVALID before describe or invoke; the signed-in
// person's own session works, and requests without a session are as
// before.
func TestSessionSubjectMustMatchSignedIn(t *testing.T) {
	toks := sessions(map[string]schema.SurfaceSession{
		"alice": {Subject: "alice", Scope: []string{"*"}, ExpiresAtMs: 1 << 40},
		"bob":   {Subject: "bob", Scope: []string{"*"}, ExpiresAtMs: 1 << 40},
	})
	for _, tc := range []struct {
		name                     string
		signedIn                 string
		hookErr                  error
		session                  string
		wantInvoke, wantDescribe string
	}{
		{"the signed-in person's session", "alice", nil, "alice", "ok", "ok"},
		{"another person's session", "alice", nil, "bob", "protocol:SESSION_INVALID", "protocol:SESSION_INVALID"},
		{"nobody signed in", "", nil, "alice", "protocol:SESSION_INVALID", "protocol:SESSION_INVALID"},
		{"the hook fails", "alice", errors.New("no cookie"), "alice", "protocol:SESSION_INVALID", "protocol:SESSION_INVALID"},
		{"no session", "alice", nil, "", "ok", "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, WithExpose("*"), WithAnonymous("*"), WithSessions(toks, false),
				WithSubject(func(context.Context) (string, error) { return tc.signedIn, tc.hookErr }))
			var ran atomic.Int64
			mustDeclare(t, e.rt, Action{ID: "invoice.void", Title: "Void", Run: counter(&ran, nil)})
			req := e.invokeReq("invoice.void", nil)
			d := e.describeReq()
			if tc.session != "" {
				req["session"] = tc.session
				d["session"] = tc.session
			}
			resp, _ := e.send(d)
			got := "ok"
			if !resp.OK {
				got = "protocol:" + resp.Error.Code
			}
			if got != tc.wantDescribe {
				t.Errorf("describe: %s, want %s", got, tc.wantDescribe)
			}
			resp, _ = e.send(req)
			if got := outcome(t, resp); got != tc.wantInvoke {
				t.Errorf("invoke: %s, want %s", got, tc.wantInvoke)
			}
			if (ran.Load() == 1) != (tc.wantInvoke == "ok") {
				t.Errorf("the handler ran %d times", ran.Load())
			}
		})
	}
}
