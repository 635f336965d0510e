package conform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/pling-go/pling/wasm/gojs"
)

// Wazero runs fixture pages in pling.wasm inside this Go program, on
// wazero through our gojs host: the same file the browser loads, no
// JavaScript engine anywhere.
type Wazero struct {
	// Dist is the directory with pling.wasm.
	Dist string
	// CacheDir, when set, keeps wazero's compiled code between runs.
	CacheDir string

	mu   sync.Mutex
	r    wazero.Runtime
	inst *gojs.Instance
	fx   *gojs.Object
}

// Name implements Host.
func (w *Wazero) Name() string { return "wazero" }

func (w *Wazero) start(ctx context.Context) error {
	if w.inst != nil {
		return nil
	}
	wasm, err := os.ReadFile(filepath.Join(w.Dist, "pling.wasm"))
	if err != nil {
		return fmt.Errorf("%w (make wasm builds it)", err)
	}
	var cache wazero.CompilationCache
	if w.CacheDir != "" {
		if cache, err = wazero.NewCompilationCacheWithDir(w.CacheDir); err != nil {
			return err
		}
	}
	w.r = gojs.NewRuntime(ctx, cache)
	compiled, err := gojs.Compile(ctx, w.r, wasm)
	if err != nil {
		return err
	}
	inst, err := gojs.Start(ctx, w.r, compiled, gojs.Config{Stderr: os.Stderr})
	if err != nil {
		return err
	}
	if code, exited := inst.Exited(); exited {
		return fmt.Errorf("wazero host: pling.wasm exited with %d", code)
	}
	v, err := inst.Get("__plingBridge", "fixture")
	if err != nil {
		return err
	}
	fx, ok := v.(*gojs.Object)
	if !ok {
		return errors.New("wazero host: the module has no __plingBridge.fixture")
	}
	w.inst, w.fx = inst, fx
	return nil
}

// Close stops the module.
func (w *Wazero) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inst == nil {
		return nil
	}
	ctx := context.Background()
	err := w.inst.Close(ctx)
	w.r.Close(ctx)
	w.inst, w.fx, w.r = nil, nil, nil
	return err
}

// call runs __plingBridge.fixture[op](args…) and returns its result as
// JSON, as the Node host answers.
func (w *Wazero) call(ctx context.Context, cmd map[string]any) (json.RawMessage, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.start(ctx); err != nil {
		return nil, err
	}
	op, _ := cmd["op"].(string)
	if !fixtureOps[op] {
		return nil, fmt.Errorf("wazero host: unknown op %q", op)
	}
	args := []any{cmd["page"]}
	if op == "load" {
		args = []any{cmd["page"]}
	}
	if t, ok := cmd["text"]; ok {
		args = append(args, t)
	}
	if b, ok := cmd["bytes"]; ok {
		args = append(args, b) // a []byte: a Uint8Array of a copy
	}
	if ms, ok := cmd["ms"]; ok {
		args = append(args, ms)
	}
	for i, a := range args {
		if n, ok := a.(int); ok {
			args[i] = float64(n)
		}
		if n, ok := a.(int64); ok {
			args[i] = float64(n)
		}
	}
	out, err := w.inst.Call(ctx, w.fx.Get(op), w.fx, args...)
	if err != nil {
		return nil, fmt.Errorf("wazero host: fixture.%s: %w", op, err)
	}
	if o, ok := out.(*gojs.Object); ok {
		if e, ok := o.Own("error"); ok {
			return nil, errors.New(gojs.ToString(e))
		}
	}
	switch v := out.(type) {
	case string:
		return json.Marshal(v)
	case float64:
		return json.Marshal(v)
	case bool:
		return json.Marshal(v)
	case nil:
		return json.RawMessage("null"), nil
	}
	return nil, fmt.Errorf("wazero host: fixture.%s returned %s", op, gojs.TypeOf(out))
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
