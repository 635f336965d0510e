package gojs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Config configures one Instance. The zero Config runs a module with its
// output discarded, os.Args == ["js"] and an empty environment.
type Config struct {
	// Stdout and Stderr receive file descriptors 1 and 2 (fs.write,
	// runtime.wasmWrite, console). Nil discards. Writes happen while the
	// instance's lock is held; a writer shared by several instances must be
	// safe for concurrent use.
	Stdout, Stderr io.Writer

	// Args is the module's os.Args, program name first. Empty means ["js"],
	// as wasm_exec.js does. Args and Env together must fit in the 8 KiB the
	// Go linker reserves for them.
	Args []string

	// Env is the module's environment.
	Env map[string]string

	// Globals are set on globalThis before main runs, each converted with
	// ValueOf; a name that is also a built-in (fs, process, …) replaces it.
	Globals map[string]any
}

// ErrExited is matched (errors.Is) by the *ExitError of a module that has
// exited.
var ErrExited = errors.New("gojs: module has exited")

// ErrClosed is returned by an Instance after Close.
var ErrClosed = errors.New("gojs: instance is closed")

// ExitError reports that the module exited — os.Exit, the end of main, or a
// panic (code 2) — during or before the call that returns it.
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string { return fmt.Sprintf("gojs: module exited with code %d", e.Code) }

// Is makes errors.Is(err, ErrExited) true.
func (e *ExitError) Is(target error) bool { return target == ErrExited }

// NewRuntime returns a wazero runtime for gojs modules, using cache when it
// is not nil. Any runtime works with Compile and Start.
//
// It does not set WithCloseOnContextDone: that option is the only way to
// stop a module stuck in a loop (a cancelled context then closes the
// module), but wazero pays for it on every call into the module — about ten
// times the cost of a small Call in BenchmarkCall — so it is the caller's
// choice: build the runtime with wazero.NewRuntimeConfig().
// WithCloseOnContextDone(true) to have it.
func NewRuntime(ctx context.Context, cache wazero.CompilationCache) wazero.Runtime {
	rc := wazero.NewRuntimeConfig()
	if cache != nil {
		rc = rc.WithCompilationCache(cache)
	}
	return wazero.NewRuntimeWithConfig(ctx, rc)
}

// Compile compiles a GOOS=js GOARCH=wasm binary and checks that it is one:
// every import is a "gojs" function this package provides, and it exports
// run, resume, getsp and mem. The result can be shared by any number of
// Instances started in r.
func Compile(ctx context.Context, r wazero.Runtime, wasm []byte) (wazero.CompiledModule, error) {
	compiled, err := r.CompileModule(ctx, wasm)
	if err != nil {
		return nil, err
	}
	if err := check(compiled); err != nil {
		_ = compiled.Close(ctx)
		return nil, err
	}
	return compiled, nil
}

func check(compiled wazero.CompiledModule) error {
	var unknown []string
	for _, f := range compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		if _, ok := imports[name]; mod != hostModule || !ok {
			unknown = append(unknown, mod+"."+name)
		}
	}
	if len(compiled.ImportedMemories()) > 0 {
		unknown = append(unknown, "a memory")
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("gojs: not a GOOS=js module (Go ≥ 1.21): it imports %s", strings.Join(unknown, ", "))
	}
	exports := compiled.ExportedFunctions()
	for _, name := range []string{"run", "resume", "getsp"} {
		if _, ok := exports[name]; !ok {
			return fmt.Errorf("gojs: not a GOOS=js module: no export %q", name)
		}
	}
	if _, ok := compiled.ExportedMemories()["mem"]; !ok {
		return errors.New(`gojs: not a GOOS=js module: no memory export "mem"`)
	}
	return nil
}

// Instance is one running module and its JavaScript environment. It is
// single-threaded like a JavaScript event loop: every method takes the
// instance's lock, so calls from several goroutines are serialized. Run
// several Instances (sharing one CompiledModule) for parallelism.
//
// The host values reachable from an instance (Global, what Get and Call
// return, what a Func receives) belong to it: read or change them from a
// Func the instance is running, or when no method of the instance is
// running. A Func must not call the instance's methods (they would wait for
// the lock the running call holds); it calls back into Go with
// Function.Call.
type Instance struct {
	mu sync.Mutex

	mod            api.Module
	mem            api.Memory
	fnRun, fnGetsp api.Function
	fnResume       []api.Function // one per nesting depth: an api.Function is not re-entrant
	depth          int            // run/resume calls on the stack
	gen            uint64         // resumes so far; sp can only move when it changes
	spBuf          [1]uint64
	ctx            context.Context // of the running entry, carries the instance for imports
	busy           atomic.Bool     // an entry point is running the module
	tab            *table
	realm          realm
	global, goObj  *Object
	stdout, stderr io.Writer
	args           []string
	umask          int
	timers         map[int32]time.Time
	nextTimer      int32
	start          time.Time // wall and monotonic clock at Start
	exited, closed bool
	code           int
	broken         error // the first failure that left Go's state unknown
}

// Start instantiates compiled in r with cfg, runs the module's main until it
// blocks (select{}, waiting on a channel…) or exits, then fires its timers
// until none is pending. It returns once the module is idle. A module that
// exits (os.Exit, end of main, panic) is not an error: see Exited. If ctx
// ends while the module still has timers pending, Start closes it and
// returns the context's error.
func Start(ctx context.Context, r wazero.Runtime, compiled wazero.CompiledModule, cfg Config) (*Instance, error) {
	if err := check(compiled); err != nil {
		return nil, err
	}
	if err := ensureHost(ctx, r); err != nil {
		return nil, err
	}
	// Anonymous, so that any number of instances share one runtime; no
	// start functions: Go's entry point is the run export.
	mod, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		return nil, err
	}
	i := &Instance{
		mod:       mod,
		mem:       mod.ExportedMemory("mem"),
		fnRun:     mod.ExportedFunction("run"),
		fnGetsp:   mod.ExportedFunction("getsp"),
		fnResume:  []api.Function{mod.ExportedFunction("resume")},
		args:      cfg.Args,
		timers:    map[int32]time.Time{},
		nextTimer: 1,
		start:     time.Now(),
	}
	if len(i.args) == 0 {
		i.args = []string{"js"}
	}
	i.newEnv(cfg)
	for _, k := range slices.Sorted(maps.Keys(cfg.Globals)) {
		v, err := valueOf(cfg.Globals[k])
		if err != nil {
			_ = mod.Close(ctx)
			return nil, fmt.Errorf("gojs: Globals[%q]: %w", k, err)
		}
		i.global.set(k, v)
	}
	i.tab = newTable(i.global, i.goObj)

	i.mu.Lock()
	defer i.mu.Unlock()
	argc, argv, err := i.writeArgs(cfg.Env)
	if err != nil {
		_ = mod.Close(ctx)
		return nil, err
	}
	err = i.entry(ctx, func() error {
		return i.callExport(i.fnRun, []uint64{argc, argv})
	})
	if err == nil {
		err = i.drain(ctx)
	}
	if err != nil && !i.exited {
		_ = i.closeLocked(ctx)
		return nil, err
	}
	return i, nil
}

// writeArgs lays out argv and envp at 4096 as wasm_exec.js does: NUL-ended
// strings aligned to 8, then the pointer arrays, each ended by 0.
func (i *Instance) writeArgs(env map[string]string) (argc, argv uint64, err error) {
	const start, limit = 4096, 4096 + 8192 // cmd/link wasmMinDataAddr
	offset := uint32(start)
	var ptrs []uint32
	strPtr := func(s string) bool {
		b := append([]byte(s), 0)
		if offset+uint32(len(b)) >= limit || !i.mem.Write(offset, b) {
			return false
		}
		ptrs = append(ptrs, offset)
		offset += uint32(len(b))
		offset = (offset + 7) &^ 7
		return true
	}
	strs := slices.Clone(i.args)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		strs = append(strs, k+"="+env[k])
	}
	for n, s := range strs {
		if !strPtr(s) {
			return 0, 0, errors.New("gojs: total length of command line and environment variables exceeds limit")
		}
		if n == len(i.args)-1 {
			ptrs = append(ptrs, 0)
		}
	}
	ptrs = append(ptrs, 0)
	argvAt := offset
	for _, p := range ptrs {
		if offset+8 >= limit || !i.mem.WriteUint64Le(offset, uint64(p)) {
			return 0, 0, errors.New("gojs: total length of command line and environment variables exceeds limit")
		}
		offset += 8
	}
	return uint64(len(i.args)), uint64(argvAt), nil
}

// entry runs fn as a call from the host into the module: the context
// carries the instance to the imports.
func (i *Instance) entry(ctx context.Context, fn func() error) error {
	i.ctx = context.WithValue(ctx, instanceKey{}, i)
	i.busy.Store(true)
	defer func() {
		i.busy.Store(false)
		i.ctx = nil
	}()
	return fn()
}

func (i *Instance) inEntry() bool { return i.busy.Load() }

// callExport calls run or resume. An error means the module trapped, an
// import failed, or it exited inside a nested call (errAbort); only the
// last is not fatal.
func (i *Instance) callExport(fn api.Function, stack []uint64) error {
	i.depth++
	i.gen++
	err := fn.CallWithStack(i.ctx, stack)
	i.depth--
	if err != nil && !i.exited && i.broken == nil {
		i.broken = fmt.Errorf("gojs: module failed: %w", err)
	}
	if i.exited {
		return nil
	}
	return i.broken
}

// resume is wasm_exec.js's _resume: run Go's event handler at the current
// depth, with its own api.Function.
func (i *Instance) resume() error {
	if err := i.usable(); err != nil {
		return err
	}
	for len(i.fnResume) <= i.depth {
		i.fnResume = append(i.fnResume, i.mod.ExportedFunction("resume"))
	}
	if err := i.callExport(i.fnResume[i.depth], nil); err != nil {
		return err
	}
	if i.exited {
		return &ExitError{Code: i.code}
	}
	return nil
}

// invoke calls the Go js.Func behind wrapper f as _makeFuncWrapper's
// function does: publish the event as _pendingEvent, resume, and read the
// result Go stored on the event.
func (i *Instance) invoke(f *Function, this Value, args []Value) (Value, error) {
	if f.owner != i {
		return nil, errors.New("gojs: function belongs to another instance")
	}
	ev := &Object{class: classObject, props: make([]prop, 0, 4)} // id, this, args, result
	ev.set("id", float64(f.goID))
	ev.set("this", this)
	ev.set("args", &Array{Object: Object{class: "Array"}, Elems: args})
	i.goObj.set("_pendingEvent", ev)
	if err := i.resume(); err != nil {
		return nil, err
	}
	return ev.Get("result"), nil
}

// usable reports why the module cannot run Go code any more.
func (i *Instance) usable() error {
	switch {
	case i.closed:
		return ErrClosed
	case i.exited:
		return &ExitError{Code: i.code}
	}
	return i.broken
}

// Global returns the module's globalThis.
func (i *Instance) Global() *Object { return i.global }

// Get returns globalThis[path[0]][path[1]]…, for example
// Get("__plingBridge", "handle"). A missing last property is undefined
// (nil), not an error; reading through undefined or null is.
func (i *Instance) Get(path ...string) (Value, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	var v Value = i.global
	for n, name := range path {
		if v == nil || v == Null {
			return nil, fmt.Errorf("gojs: globalThis.%s is %s", strings.Join(path[:n], "."), ToString(v))
		}
		var err error
		if v, err = i.get(v, name); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Call calls the function fn with this and args (each converted with
// ValueOf) and returns its result. For a Go js.Func this re-enters the
// module exactly as JavaScript does (_pendingEvent, then resume); Call then
// fires the module's timers until none is pending, so goroutines the call
// started can finish.
//
// Errors: a host function's error as it returned it (an *Exception when it
// threw a value); *ExitError when the module exited during the call; if ctx
// ends while timers are still pending after fn returned, Call returns fn's
// result together with an error wrapping ctx.Err() — the call itself
// happened, and the timers fire on the next entry.
func (i *Instance) Call(ctx context.Context, fn Value, this Value, args ...any) (Value, error) {
	vals, err := valuesOf(args)
	if err != nil {
		return nil, err
	}
	if this, err = normalize(this); err != nil {
		return nil, err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if err := i.usable(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var res Value
	err = i.entry(ctx, func() error {
		var err error
		res, err = i.callValue(fn, this, vals)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := i.drain(ctx); err != nil {
		if i.exited {
			return nil, &ExitError{Code: i.code}
		}
		return res, fmt.Errorf("gojs: module not idle after the call: %w", err)
	}
	if i.exited {
		return nil, &ExitError{Code: i.code}
	}
	return res, nil
}

// RunUntilIdle fires the module's timers (time.Sleep, time.AfterFunc, …)
// as they fall due until none is pending, the module exits, or ctx ends.
// The lock is released while waiting, so Calls from other goroutines
// proceed in between, as events do in JavaScript.
func (i *Instance) RunUntilIdle(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.exited {
		return nil
	}
	if err := i.usable(); err != nil {
		return err
	}
	return i.drain(ctx)
}

// Exited reports whether the module has exited and with which code.
func (i *Instance) Exited() (code int, exited bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.code, i.exited
}

// ValueTableSize is the number of JavaScript values the module holds
// references to (wasm_exec.js's _values minus its free ids), the seven
// predefined ones included. It is bounded by the js.Values alive in the
// module, not by how many values ever crossed.
func (i *Instance) ValueTableSize() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.tab == nil {
		return 0
	}
	return i.tab.live()
}

// Close closes the module and drops its pending timers. It waits for a call
// in progress; to stop one stuck in a loop, cancel its context on a runtime
// made with WithCloseOnContextDone (see NewRuntime).
func (i *Instance) Close(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.closeLocked(ctx)
}

func (i *Instance) closeLocked(ctx context.Context) error {
	if i.closed {
		return nil
	}
	i.closed = true
	clear(i.timers)
	i.tab = nil
	return i.mod.Close(ctx)
}
