package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/pling-go/pling/wasm/gojs"
)

// benchWazero measures the module on our gojs host: cold start to the
// first response without and with wazero's compilation cache, then the
// per-call cost through the fixture entry.
func benchWazero(ctx context.Context, dist string, page []byte, iters int) (hostFigures, error) {
	wasm, err := os.ReadFile(filepath.Join(dist, "pling-conform.wasm")) // the test module: it has the fixture entry
	if err != nil {
		return hostFigures{}, err
	}
	cacheDir, err := os.MkdirTemp("", "pling-bench-wazero-*")
	if err != nil {
		return hostFigures{}, err
	}
	defer os.RemoveAll(cacheDir)

	// cold starts the module and answers one describe; with a cache dir,
	// compiled code is kept there.
	cold := func(withCache bool) (time.Duration, *gojs.Instance, wazero.Runtime, error) {
		start := time.Now()
		var cache wazero.CompilationCache
		if withCache {
			if cache, err = wazero.NewCompilationCacheWithDir(cacheDir); err != nil {
				return 0, nil, nil, err
			}
		}
		r := gojs.NewRuntime(ctx, cache)
		compiled, err := gojs.Compile(ctx, r, wasm)
		if err != nil {
			return 0, nil, nil, err
		}
		inst, err := gojs.Start(ctx, r, compiled, gojs.Config{})
		if err != nil {
			return 0, nil, nil, err
		}
		if _, err := fixtureCall(ctx, inst, "load", string(page)); err != nil {
			return 0, nil, nil, err
		}
		first, err := fixtureCall(ctx, inst, "handle", 1.0, `{"protocol":"pling.surface/0.1","id":"cold","method":"describe"}`)
		if err != nil {
			return 0, nil, nil, err
		}
		var resp struct{ OK bool }
		if json.Unmarshal([]byte(first), &resp) != nil || !resp.OK {
			return 0, nil, nil, fmt.Errorf("first describe failed: %.200s", first)
		}
		return time.Since(start), inst, r, nil
	}
	coldNoCache, inst, r, err := cold(false)
	if err != nil {
		return hostFigures{}, err
	}
	inst.Close(ctx)
	r.Close(ctx)
	if _, inst, r, err = cold(true); err != nil { // fills the cache
		return hostFigures{}, err
	}
	inst.Close(ctx)
	r.Close(ctx)
	coldCached, inst, r, err := cold(true)
	if err != nil {
		return hostFigures{}, err
	}
	defer r.Close(ctx)
	defer inst.Close(ctx)
	h := func(b []byte) []byte {
		s, err := fixtureCall(ctx, inst, "handle", 1.0, string(b))
		if err != nil {
			return nil
		}
		return []byte(s)
	}
	return hostFigures{
		ColdStartMs:  float64(coldNoCache.Microseconds()) / 1000,
		ColdCachedMs: float64(coldCached.Microseconds()) / 1000,
		DescribeUs:   timeCalls(iters, "describe", nil, h),
		InvokeUs:     timeCalls(iters, "invoke", map[string]any{"capability": "noop", "input": map[string]any{}}, h),
	}, nil
}

func fixtureCall(ctx context.Context, inst *gojs.Instance, op string, args ...any) (string, error) {
	fn, err := inst.Get("__plingBridge", "fixture", op)
	if err != nil {
		return "", err
	}
	out, err := inst.Call(ctx, fn, nil, args...)
	if err != nil {
		return "", err
	}
	if o, ok := out.(*gojs.Object); ok {
		if e, ok := o.Own("error"); ok {
			return "", fmt.Errorf("fixture.%s: %s", op, gojs.ToString(e))
		}
	}
	return gojs.ToString(out), nil
}
