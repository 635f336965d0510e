package mcp_test

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/runtime"
)

func ExampleNewServer() {
	ctx := context.Background()
	rt := runtime.New(runtime.WithExpose("*"))
	rt.DeclareAction(runtime.Action{ID: "cart.add", Title: "Add to cart",
		Params: map[string]runtime.Param{"sku": {Type: "string", Required: true}},
		Run:    func(context.Context, *runtime.Call) (any, error) { return "added", nil }})
	server := plingmcp.NewServer(agent.New(agent.InProcess(rt)))

	st, ct := sdk.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		panic(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "host"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	tools, _ := cs.ListTools(ctx, nil)
	fmt.Println(tools.Tools[0].Name, "-", tools.Tools[0].Description)
	res, _ := cs.CallTool(ctx, &sdk.CallToolParams{Name: "cart_add", Arguments: map[string]any{"sku": "A1"}})
	fmt.Println(res.IsError, res.StructuredContent.(map[string]any)["value"])
	res, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "cart_add", Arguments: map[string]any{}})
	fmt.Println(res.IsError, res.StructuredContent.(map[string]any)["error"].(map[string]any)["code"])
	// Output:
	// cart_add - From the page: "Add to cart"
	// false added
	// true INVALID_PARAMS
}
