package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/runtime"
)

// TestCallDoesNotWaitForDescribe: a tool call made while the bridge's
// describe of the page is still out (the --poll timer's, a tools/list's,
// on a page whose rows take long to read) is sent at once and answered
// before that describe ends; the describe's answer is applied after.
func TestCallDoesNotWaitForDescribe(t *testing.T) {
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	if _, err := rt.DeclareAction(runtime.Action{ID: "cart.add", Title: "Add to cart",
		Run: func(context.Context, *runtime.Call) (any, error) { return "added", nil }}); err != nil {
		t.Fatal(err)
	}
	inner := agent.InProcess(rt)
	hold := make(chan chan struct{}, 1) // a describe sent while one is here waits for it to close
	entered := make(chan struct{}, 1)
	tr := agent.TransportFunc(func(ctx context.Context, raw []byte) ([]byte, error) {
		var m struct{ Method string }
		_ = json.Unmarshal(raw, &m)
		if m.Method == "describe" {
			select {
			case release := <-hold:
				entered <- struct{}{}
				<-release
			default:
			}
		}
		return inner.RoundTrip(ctx, raw)
	})
	b := plingmcp.NewBridge(agent.New(tr))
	s := connect(t, b)

	release := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	hold <- release
	refreshed := make(chan error, 1)
	go func() { _, err := b.Refresh(context.Background()); refreshed <- err }()
	<-entered

	called := make(chan error, 1)
	go func() {
		res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "cart_add"})
		if err == nil && res.IsError {
			err = context.DeadlineExceeded
		}
		called <- err
	}()
	select {
	case err := <-called:
		if err != nil {
			t.Errorf("the call while a describe was out: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call waited for the describe that was out (20 s, and it is still out)")
	}
	close(release)
	if err := <-refreshed; err != nil {
		t.Errorf("the describe that was out: %v", err)
	}
}
