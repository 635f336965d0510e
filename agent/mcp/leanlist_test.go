package mcp_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/internal/testing/mcptest"
	"github.com/pling-go/pling/runtime"
)

// TestToolListLeavesDefaultHintsOut: a tools/list answer, as it crosses
// the transport, carries only the hints that say something MCP would
// not assume: no readOnlyHint or idempotentHint false (the SDK writes
// them on every annotated tool), and the hints the bridge set as set.
func TestToolListLeavesDefaultHintsOut(t *testing.T) {
	declare := declarer(t)
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	declare(rt.DeclareAction(runtime.Action{ID: "note.add", Title: "Add a note", Risk: "write",
		Run: func(context.Context, *runtime.Call) (any, error) { return nil, nil }}))
	declare(rt.DeclareAction(runtime.Action{ID: "note.wipe", Title: "Wipe the notes", Risk: "destructive",
		Run: func(context.Context, *runtime.Call) (any, error) { return nil, nil }}))
	declare(rt.DeclareAction(runtime.Action{ID: "notes.count", Title: "Count the notes", Risk: "read",
		Run: func(context.Context, *runtime.Call) (any, error) { return 0, nil }}))
	b := plingmcp.NewBridge(agent.New(agent.InProcess(rt)))
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	if _, err := b.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	wire := new(atomic.Pointer[json.RawMessage])
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, mcptest.Tools{Transport: ct, Last: wire}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name        string          `json:"name"`
		Annotations json.RawMessage `json:"annotations"`
	}
	if w := wire.Load(); w == nil || json.Unmarshal(*w, &tools) != nil {
		t.Fatal("no tools/list answer crossed the transport")
	}
	got := map[string]string{}
	for _, tl := range tools {
		got[tl.Name] = string(tl.Annotations)
	}
	want := map[string]string{
		"note_add":    `{"destructiveHint":false}`,
		"note_wipe":   `{"destructiveHint":true}`,
		"notes_count": `{"openWorldHint":true,"readOnlyHint":true}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations on the wire (-want +got):\n%s", diff)
	}
}
