// Package gojs runs Go GOOS=js GOARCH=wasm modules inside a Go program on
// wazero: it is the host side of the "gojs" import module, which wazero
// dropped in v1.7.0, together with the slice of a JavaScript environment
// that the Go runtime, syscall, syscall/js, os and time use.
//
// The ABI belongs to the Go release. Its specification is the toolchain's
// own JavaScript side, $(go env GOROOT)/lib/wasm/wasm_exec.js: the 24
// imports (runtime.* and syscall/js.*, each func(sp i32) with arguments at
// sp+8), the exports run, resume, getsp and mem, the value encoding
// (undefined is 0, numbers are float64 bits, everything else a NaN-boxed id
// into a reference table) and the event protocol (_makeFuncWrapper,
// _pendingEvent, resume). It targets Go ≥ 1.21, which names the module
// "gojs".
//
// # Use
//
//	r := gojs.NewRuntime(ctx, nil)
//	compiled, err := gojs.Compile(ctx, r, wasmBytes)
//	inst, err := gojs.Start(ctx, r, compiled, gojs.Config{Stdout: os.Stdout})
//	fn, err := inst.Get("__plingBridge", "handle")
//	out, err := inst.Call(ctx, fn, nil, `{"id":"1"}`)
//
// Start runs main until the module is idle — main blocked (select{}) with no
// timer pending — or exited; Call invokes a function the module published
// (a js.FuncOf) the way JavaScript does and returns when the module is idle
// again.
//
// # Values
//
// JavaScript values on the host are Value: nil (undefined), Null, bool,
// float64, string, *Object, *Array, *Uint8Array and *Function. Host
// functions are Func values wrapped by NewFunc; the module calls them with
// valueCall, valueInvoke and valueNew, and they can call back into Go
// (Function.Call) while they run, which nests a resume inside the import,
// as JavaScript does.
//
// The reference table follows wasm_exec.js exactly (_values, _goRefCounts,
// _ids, _idPool): a value gets one id however often it crosses, Go counts
// its references, and syscall/js.finalizeRef frees the id when the last
// js.Value holding it is collected, so the table stays bounded
// (Instance.ValueTableSize).
//
// # Concurrency
//
// An Instance is single-threaded, like the JavaScript event loop it stands
// in for: one mutex serializes Start, Call, Get, RunUntilIdle, Close and
// every other method, and timers fire under it too, so a timer never runs
// inside a Call. For parallelism run several Instances — they may share one
// runtime and one CompiledModule and run on different goroutines at once.
// A Func runs with the lock held and must not call its instance's methods.
//
// # Environment
//
// globalThis provides Object, Array, Uint8Array, Error, Date (with
// getTimezoneOffset, from the host's time.Local), RegExp (new RegExp(source,
// "u") and test, for the ECMAScript subset internal/jspattern accepts, with
// the evaluator native Go uses), JSON (parse, stringify),
// console (log/info/debug to Stdout, warn/error to Stderr),
// crypto.getRandomValues, performance.now, path.resolve, process (pid and
// ids -1, getgroups [], umask, cwd "/", argv, env) and fs: writeSync and
// write on descriptors 1 and 2, fsync, and every other call failing with an
// Error whose code is "ENOSYS", as in wasm_exec.js. There is no Promise,
// no fetch and no real file system. Config.Globals adds or replaces
// properties of globalThis before main runs.
//
// Design decisions are in RATIONALE.md next to this file.
package gojs
