package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// With a session verifier, a request without a session reaches only what
// WithAnonymous names (within the site allowlist); without WithAnonymous
// it would reach nothing.
func ExampleWithAnonymous() {
	verifier := runtime.SessionVerifierFunc(func(context.Context, string, int64) (schema.SurfaceSession, error) {
		return schema.SurfaceSession{Subject: "alice", Scope: []string{"cart.*"}, ExpiresAtMs: 1 << 40}, nil
	})
	rt := runtime.New(
		runtime.WithExpose("*"),
		runtime.WithSessions(verifier, false),
		runtime.WithAnonymous("catalog.*"),
	)
	for _, id := range []string{"catalog.search", "cart.add"} {
		rt.DeclareAction(runtime.Action{ID: id, Title: id})
	}
	for _, id := range []string{"catalog.search", "cart.add"} {
		out := rt.Handle(context.Background(), []byte(`{"protocol":"pling.surface/0.1","id":"`+id+`","method":"invoke","capability":"`+id+`"}`))
		var resp struct{ OK bool }
		_ = json.Unmarshal(out, &resp)
		fmt.Println(id, resp.OK)
	}
	// Output:
	// catalog.search true
	// cart.add false
}
