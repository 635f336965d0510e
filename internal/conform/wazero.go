package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/pling-go/pling/internal/conform/wazerohost"
)

// Wazero runs fixture pages in the test module (Module) inside this Go
// program, on wazero through our gojs host (internal/conform/wazerohost): the same
// build the other hosts load, no JavaScript engine anywhere.
type Wazero struct {
	// Dist is the directory with the test module (Module).
	Dist string
	// CacheDir, when set, keeps wazero's compiled code between runs.
	CacheDir string

	once sync.Once
	m    *wazerohost.Module
}

// Name implements Host.
func (w *Wazero) Name() string { return "wazero" }

func (w *Wazero) module() *wazerohost.Module {
	w.once.Do(func() { w.m = &wazerohost.Module{Dist: w.Dist, CacheDir: w.CacheDir} })
	return w.m
}

// Close stops the module.
func (w *Wazero) Close() error { return w.module().Close() }

// call runs __plingBridge.fixture[op](args…) and returns its result as
// JSON, as the Node host answers.
func (w *Wazero) call(ctx context.Context, cmd map[string]any) (json.RawMessage, error) {
	op, _ := cmd["op"].(string)
	if !fixtureOps[op] {
		return nil, fmt.Errorf("wazero host: unknown op %q", op)
	}
	args := []any{cmd["page"]}
	if t, ok := cmd["text"]; ok {
		args = append(args, t)
	}
	if b, ok := cmd["bytes"]; ok {
		args = append(args, b) // a []byte: a Uint8Array of a copy
	}
	if ms, ok := cmd["ms"]; ok {
		args = append(args, ms)
	}
	out, err := w.module().Call(ctx, op, args...)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return json.RawMessage("null"), nil
	}
	return json.Marshal(out)
}

// Load implements Host.
func (w *Wazero) Load(ctx context.Context, page json.RawMessage) (Page, error) {
	v, err := w.call(ctx, map[string]any{"op": "load", "page": string(page)})
	if err != nil {
		return nil, err
	}
	var id float64
	if err := json.Unmarshal(v, &id); err != nil {
		return nil, err
	}
	return &bridgePage{id: int(id), call: func(cmd map[string]any) (json.RawMessage, error) {
		return w.call(ctx, cmd)
	}}, nil
}
