package wazerohost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/pling-go/pling/wasm/gojs"
)

// TestModule is the test module's file name in a dist directory: the
// module built with -tags plingfixture, the only build with the fixture
// entry (__plingBridge.fixture). make wasm builds it beside the shipped
// pling.wasm, which has no such entry.
const TestModule = "pling-conform.wasm"

// Module is the test module running inside this Go program on wazero,
// through our gojs host. Call runs one function of its fixture entry.
type Module struct {
	// Dist is the directory with TestModule.
	Dist string
	// CacheDir, when set, keeps wazero's compiled code between runs.
	CacheDir string

	mu   sync.Mutex
	r    wazero.Runtime
	inst *gojs.Instance
	fx   *gojs.Object
}

func (m *Module) start(ctx context.Context) error {
	if m.inst != nil {
		return nil
	}
	wasm, err := os.ReadFile(filepath.Join(m.Dist, TestModule))
	if err != nil {
		return fmt.Errorf("%w (make wasm builds it)", err)
	}
	var cache wazero.CompilationCache
	if m.CacheDir != "" {
		if cache, err = wazero.NewCompilationCacheWithDir(m.CacheDir); err != nil {
			return err
		}
	}
	m.r = gojs.NewRuntime(ctx, cache)
	compiled, err := gojs.Compile(ctx, m.r, wasm)
	if err != nil {
		m.r.Close(ctx)
		return err
	}
	inst, err := gojs.Start(ctx, m.r, compiled, gojs.Config{Stderr: os.Stderr})
	if err != nil {
		m.r.Close(ctx)
		return err
	}
	if code, exited := inst.Exited(); exited {
		m.r.Close(ctx)
		return fmt.Errorf("wazero host: %s exited with %d", TestModule, code)
	}
	v, err := inst.Get("__plingBridge", "fixture")
	if err != nil {
		m.r.Close(ctx)
		return err
	}
	fx, ok := v.(*gojs.Object)
	if !ok {
		m.r.Close(ctx)
		return fmt.Errorf("wazero host: %s has no __plingBridge.fixture", TestModule)
	}
	m.inst, m.fx = inst, fx
	return nil
}

// Call runs __plingBridge.fixture[op](args…), starting the module on the
// first call. Numbers go as float64, a []byte as a Uint8Array of a copy.
// The result is a string, a float64, a bool or nil.
func (m *Module) Call(ctx context.Context, op string, args ...any) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.start(ctx); err != nil {
		return nil, err
	}
	for i, a := range args {
		switch n := a.(type) {
		case int:
			args[i] = float64(n)
		case int64:
			args[i] = float64(n)
		}
	}
	out, err := m.inst.Call(ctx, m.fx.Get(op), m.fx, args...)
	if err != nil {
		return nil, fmt.Errorf("wazero host: fixture.%s: %w", op, err)
	}
	if o, ok := out.(*gojs.Object); ok {
		if e, ok := o.Own("error"); ok {
			return nil, errors.New(gojs.ToString(e))
		}
	}
	switch out.(type) {
	case string, float64, bool, nil:
		return out, nil
	}
	return nil, fmt.Errorf("wazero host: fixture.%s returned %s", op, gojs.TypeOf(out))
}

// Close stops the module.
func (m *Module) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inst == nil {
		return nil
	}
	ctx := context.Background()
	err := m.inst.Close(ctx)
	m.r.Close(ctx)
	m.inst, m.fx, m.r = nil, nil, nil
	return err
}
