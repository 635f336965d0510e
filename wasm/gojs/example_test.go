package gojs_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/pling-go/pling/wasm/gojs"
)

// Start a GOOS=js module, then call a function it published on globalThis.
// (Not run: it needs a module built with GOOS=js GOARCH=wasm; the tests
// build one from testdata/module.)
func Example() {
	ctx := context.Background()
	wasm, err := os.ReadFile("module.wasm")
	if err != nil {
		log.Fatal(err)
	}
	r := gojs.NewRuntime(ctx, nil)
	defer r.Close(ctx)
	compiled, err := gojs.Compile(ctx, r, wasm)
	if err != nil {
		log.Fatal(err)
	}
	inst, err := gojs.Start(ctx, r, compiled, gojs.Config{
		Args:   []string{"module", "bridge"},
		Stdout: os.Stdout,
		Globals: map[string]any{
			"hostAdd": gojs.Func(func(_ gojs.Value, args []gojs.Value) (gojs.Value, error) {
				return args[0].(float64) + args[1].(float64), nil
			}),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Close(ctx)

	concat, err := inst.Get("__plingBridge", "concat")
	if err != nil {
		log.Fatal(err)
	}
	out, err := inst.Call(ctx, concat, nil, "foo", "bar")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
}

func ExampleNumberToString() {
	fmt.Println(gojs.NumberToString(1e21), gojs.NumberToString(0.000001), gojs.NumberToString(1.5e-7))
	// Output: 1e+21 0.000001 1.5e-7
}

func ExampleNewObject() {
	o := gojs.NewObject(map[string]any{"b": []any{1, "two"}, "a": true})
	for _, k := range o.Keys() {
		fmt.Printf("%s: %s (%s)\n", k, gojs.ToString(o.Get(k)), gojs.TypeOf(o.Get(k)))
	}
	// Output:
	// a: true (boolean)
	// b: 1,two (object)
}

func ExampleFunction_Call() {
	double := gojs.NewFunc("double", func(_ gojs.Value, args []gojs.Value) (gojs.Value, error) {
		return args[0].(float64) * 2, nil
	})
	v, err := double.Call(nil, 21)
	fmt.Println(v, err)
	// Output: 42 <nil>
}
