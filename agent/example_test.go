package agent_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/runtime"
)

func ExampleClient_Invoke() {
	rt := runtime.New(runtime.WithExpose("*"))
	rt.DeclareAction(runtime.Action{ID: "hello", Title: "Say hello",
		Run: func(context.Context, *runtime.Call) (any, error) { return "hi", nil }})
	c := agent.New(agent.InProcess(rt))

	res, err := c.Invoke(context.Background(), "hello", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Value))

	// A capability the page does not have: the client describes once, sees
	// it is not listed, and returns the business failure without retrying.
	_, err = c.Invoke(context.Background(), "helo", nil)
	var be *agent.BusinessError
	fmt.Println(errors.As(err, &be), be.Code, errors.Is(err, perr.New(perr.ActionNotFound, "", nil)))
	// Output:
	// "hi"
	// true ACTION_NOT_FOUND true
}

func ExampleUnconfirmedError() {
	rt := runtime.New(runtime.WithExpose("*"))
	paid := 0
	rt.DeclareAction(runtime.Action{ID: "order.pay", Title: "Pay",
		Run: func(context.Context, *runtime.Call) (any, error) { paid++; return "paid", nil }})
	inner := agent.InProcess(rt)
	// The answer is lost after the page ran the call.
	lossy := agent.TransportFunc(func(ctx context.Context, req []byte) ([]byte, error) {
		if _, err := inner.RoundTrip(ctx, req); err != nil {
			return nil, err
		}
		return nil, errors.New("connection reset")
	})
	c := agent.New(lossy)

	_, err := c.Invoke(context.Background(), "order.pay", nil)
	var ue *agent.UnconfirmedError
	fmt.Println(errors.As(err, &ue), errors.Is(err, agent.ErrUnconfirmed), paid)
	// Output:
	// true true 1
}
