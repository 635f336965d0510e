package runtime_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/pling-go/pling/runtime"
)

// A page declares an action and a state; an agent describes the page.
func ExampleNew() {
	rt := runtime.New(
		runtime.WithClock(runtime.NewFakeClock(0)),
		runtime.WithExpose("cart.*"), // the site allowlist: nothing is exposed without one
	)
	count := 0
	rt.DeclareState(runtime.State{Key: "cart.count", Read: func(context.Context) (any, error) { return count, nil }})
	_, err := rt.DeclareAction(runtime.Action{
		ID:     "cart.add",
		Title:  "Add to cart",
		Params: map[string]runtime.Param{"sku": {Type: "string", Required: true}},
		Run: func(_ context.Context, c *runtime.Call) (any, error) {
			count++
			return map[string]any{"added": c.Input["sku"]}, nil
		},
		Expect: &runtime.Expectation{State: "cart.count", Change: "increase"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	out := rt.Handle(context.Background(), []byte(`{"protocol":"pling.surface/0.1","id":"r1","method":"describe"}`))
	fmt.Println(exampleShow(out))
	// Output:
	// {"protocol":"pling.surface/0.1","id":"r1","ok":true,"result":{"revision":"r…","capabilities":[{"id":"cart.add","title":"Add to cart","risk":"write","inputSchema":{"type":"object","properties":{"sku":{"type":"string"}},"required":["sku"],"additionalProperties":false}}],"context":{"states":{"cart.count":0}}}}
}

// An agent invokes a capability: the result carries the value, evidence
// that the expectation was met, and the observed change.
func ExampleRuntime_Handle() {
	rt := runtime.New(runtime.WithClock(runtime.NewFakeClock(0)), runtime.WithExpose("*"))
	count := 0
	rt.DeclareState(runtime.State{Key: "cart.count", Read: func(context.Context) (any, error) { return count, nil }})
	rt.DeclareAction(runtime.Action{
		ID: "cart.add", Title: "Add to cart",
		Params: map[string]runtime.Param{"sku": {Type: "string", Required: true}, "qty": {Type: "integer", Minimum: examplePtr(1.0), Default: 1}},
		Run: func(_ context.Context, c *runtime.Call) (any, error) {
			count++
			return map[string]any{"added": c.Input["sku"], "qty": c.Input["qty"]}, nil
		},
		Expect: &runtime.Expectation{State: "cart.count", Change: "increase"},
	})
	ctx := context.Background()

	ok := rt.Handle(ctx, []byte(`{"protocol":"pling.surface/0.1","id":"r2","method":"invoke","capability":"cart.add","input":{"sku":"A1"}}`))
	fmt.Println(exampleShow(ok))

	// A business failure is ok:true with result.error.
	bad := rt.Handle(ctx, []byte(`{"protocol":"pling.surface/0.1","id":"r3","method":"invoke","capability":"cart.add","input":{"qty":0}}`))
	fmt.Println(exampleShow(bad))

	// A protocol failure is ok:false: the same id again is a replay.
	again := rt.Handle(ctx, []byte(`{"protocol":"pling.surface/0.1","id":"r2","method":"invoke","capability":"cart.add","input":{"sku":"A1"}}`))
	fmt.Println(strings.Contains(string(again), `"code":"REPLAY_DETECTED"`), count)
	// Output:
	// {"protocol":"pling.surface/0.1","id":"r2","ok":true,"result":{"value":{"added":"A1","qty":1},"evidence":{"capability":"cart.add","expectations":[{"state":"cart.count","condition":"increase","before":0,"after":1,"met":true}],"summary":"cart.add ran"},"observation":{"states":{"cart.count":{"before":0,"after":1}},"capabilitiesChanged":false,"revision":"r…"}}}
	// {"protocol":"pling.surface/0.1","id":"r3","ok":true,"result":{"error":{"code":"INVALID_PARAMS","message":"The arguments do not satisfy the schema","details":{"violations":[{"path":"/qty","reason":"must be at least 1"},{"path":"/sku","reason":"is required"}]}},"observation":{"capabilitiesChanged":false,"revision":"r…"}}}
	// true 1
}

func examplePtr[T any](v T) *T { return &v }

var exampleRevisionRe = regexp.MustCompile(`"revision":"r[0-9a-f]+"`)

// exampleShow prints a response with its revision shortened: the revision is a
// digest of the listed declarations, stable but not worth pinning here.
func exampleShow(out []byte) string {
	return exampleRevisionRe.ReplaceAllString(string(out), `"revision":"r…"`)
}
