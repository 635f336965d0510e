package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/runtime"
)

// TestToolNameStaysBound: a tool name stays bound to its capability for
// the session (issue 21 finding 6). The page has cart_empty; it adds
// cart.empty, whose tool name runtime.ToolNames would also make
// cart_empty. On d4f77f3 it fails: cart_empty then invoked cart.empty, and
// the old capability became cart_empty_2.
func TestToolNameStaysBound(t *testing.T) {
	rt := runtime.New(runtime.WithExpose("*"))
	var ran []string
	declare := func(id string) {
		rt.DeclareAction(runtime.Action{ID: id, Title: "Empty " + id,
			Run: func(context.Context, *runtime.Call) (any, error) { ran = append(ran, id); return id, nil }})
	}
	declare("cart_empty")
	b := plingmcp.NewBridge(agent.New(agent.InProcess(rt)))
	s := connect(t, b)
	call(t, s, "cart_empty", nil)
	declare("cart.empty")
	if _, err := b.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	call(t, s, "cart_empty", nil)
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Name != "cart_empty" {
			call(t, s, tl.Name, nil)
		}
	}
	if diff := cmp.Diff([]string{"cart_empty", "cart_empty", "cart.empty"}, ran); diff != "" {
		t.Errorf("capabilities run by cart_empty, cart_empty, then the other tool %s (-want +got):\n%s", strings.Join(names, ","), diff)
	}
}
