package gojs_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/pling-go/pling/wasm/gojs"
)

// The test module is the main package in testdata/module, built once per
// test binary with the local toolchain (GOOS=js GOARCH=wasm) and compiled
// once into a runtime the tests share. Compiling Go's runtime to machine
// code dominates a run (seconds; minutes under -race), so the compiled code
// is kept in a wazero compilation cache under the user cache directory,
// keyed by the module's content like Go's build cache.
var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error

	compileOnce sync.Once
	rt          wazero.Runtime
	compiled    wazero.CompiledModule
	compileErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if rt != nil {
		_ = rt.Close(context.Background())
	}
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// wasmFile returns the path of the built test module, skipping the test
// when there is no go command to build it with.
func wasmFile(tb testing.TB) string {
	tb.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("no go command on PATH to build the test module")
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "gojs-test-"); buildErr != nil {
			return
		}
		cmd := exec.Command(goCmd, "build", "-o", filepath.Join(buildDir, "module.wasm"), "./testdata/module")
		cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "module.wasm")
}

// testModule returns the shared runtime and the test module compiled in it.
func testModule(tb testing.TB) (wazero.Runtime, wazero.CompiledModule) {
	tb.Helper()
	path := wasmFile(tb)
	compileOnce.Do(func() {
		ctx := context.Background()
		var cache wazero.CompilationCache
		if dir, err := os.UserCacheDir(); err == nil {
			cache, _ = wazero.NewCompilationCacheWithDir(filepath.Join(dir, "pling-gojs-test"))
		}
		rt = gojs.NewRuntime(ctx, cache)
		bin, err := os.ReadFile(path)
		if err != nil {
			compileErr = err
			return
		}
		compiled, compileErr = gojs.Compile(ctx, rt, bin)
	})
	if compileErr != nil {
		tb.Fatal(compileErr)
	}
	return rt, compiled
}

// start starts the test module with cfg, closing it when the test ends.
func start(tb testing.TB, cfg gojs.Config) *gojs.Instance {
	tb.Helper()
	r, c := testModule(tb)
	inst, err := gojs.Start(context.Background(), r, c, cfg)
	if err != nil {
		tb.Fatalf("Start(%q): %v", cfg.Args, err)
	}
	tb.Cleanup(func() { _ = inst.Close(context.Background()) })
	return inst
}

// plain turns a Value into ordinary Go values for comparison: objects into
// map[string]any, arrays into []any, Uint8Arrays into []byte.
func plain(v gojs.Value) any {
	switch v := v.(type) {
	case *gojs.Array:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = plain(e)
		}
		return out
	case *gojs.Uint8Array:
		return append([]byte{}, v.Data...)
	case *gojs.Function:
		return "function " + v.Name()
	case *gojs.Object:
		out := map[string]any{}
		for _, k := range v.Keys() {
			out[k] = plain(v.Get(k))
		}
		return out
	case gojs.NullValue:
		return "<null>"
	}
	return v
}
