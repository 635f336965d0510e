package gojs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// The "gojs" import module. Every import is func(sp i32): its arguments and
// results live on the Go stack at sp+8…, laid out as the Go declaration in
// the comment above each handler (the offsets are wasm_exec.js's, which is
// the specification: $(go env GOROOT)/lib/wasm/wasm_exec.js).

const hostModule = "gojs"

// hostMarker is exported by our host module so that Start can tell it from
// another module named "gojs" in the same runtime.
const hostMarker = "pling.gojs.host"

type importFn func(i *Instance, sp uint32)

var imports = map[string]importFn{
	"runtime.wasmExit":              (*Instance).wasmExit,
	"runtime.wasmWrite":             (*Instance).wasmWrite,
	"runtime.resetMemoryDataView":   func(*Instance, uint32) {}, // wazero reads memory afresh on every access
	"runtime.nanotime1":             (*Instance).nanotime1,
	"runtime.walltime":              (*Instance).walltime,
	"runtime.scheduleTimeoutEvent":  (*Instance).scheduleTimeoutEvent,
	"runtime.clearTimeoutEvent":     (*Instance).clearTimeoutEvent,
	"runtime.getRandomData":         (*Instance).getRandomData,
	"syscall/js.finalizeRef":        (*Instance).finalizeRef,
	"syscall/js.stringVal":          (*Instance).stringVal,
	"syscall/js.valueGet":           (*Instance).valueGet,
	"syscall/js.valueSet":           (*Instance).valueSet,
	"syscall/js.valueDelete":        (*Instance).valueDelete,
	"syscall/js.valueIndex":         (*Instance).valueIndex,
	"syscall/js.valueSetIndex":      (*Instance).valueSetIndex,
	"syscall/js.valueCall":          (*Instance).valueCall,
	"syscall/js.valueInvoke":        (*Instance).valueInvoke,
	"syscall/js.valueNew":           (*Instance).valueNew,
	"syscall/js.valueLength":        (*Instance).valueLength,
	"syscall/js.valuePrepareString": (*Instance).valuePrepareString,
	"syscall/js.valueLoadString":    (*Instance).valueLoadString,
	"syscall/js.valueInstanceOf":    (*Instance).valueInstanceOf,
	"syscall/js.copyBytesToGo":      (*Instance).copyBytesToGo,
	"syscall/js.copyBytesToJS":      (*Instance).copyBytesToJS,
	// debug(value) is console.log(value) in wasm_exec.js; its argument is
	// the value itself, not sp.
	"debug": func(i *Instance, v uint32) { fmt.Fprintf(i.stderr, "%d\n", int32(v)) },
}

type instanceKey struct{}

var hostMu sync.Mutex

// ensureHost instantiates the "gojs" host module in r once. The module is
// shared by every instance in r; each call finds its Instance in the
// context, which every entry point sets.
func ensureHost(ctx context.Context, r wazero.Runtime) error {
	hostMu.Lock()
	defer hostMu.Unlock()
	if m := r.Module(hostModule); m != nil {
		if _, ok := m.ExportedFunctionDefinitions()[hostMarker]; !ok {
			return fmt.Errorf("gojs: the runtime already has a module named %q that is not this package's host", hostModule)
		}
		return nil
	}
	b := r.NewHostModuleBuilder(hostModule)
	i32 := []api.ValueType{api.ValueTypeI32}
	for name, fn := range imports {
		b.NewFunctionBuilder().
			WithGoModuleFunction(hostFunc(name, fn), i32, nil).
			WithName(name).
			Export(name)
	}
	b.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(context.Context, []uint64) {}), nil, nil).Export(hostMarker)
	_, err := b.Instantiate(ctx)
	return err
}

func hostFunc(name string, fn importFn) api.GoModuleFunction {
	return api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
		i, ok := ctx.Value(instanceKey{}).(*Instance)
		if !ok {
			panic(fmt.Errorf("gojs: %s called outside gojs.Start or an Instance method", name))
		}
		fn(i, uint32(stack[0]))
	})
}

// errAbort unwinds the module's stack when it exited or broke inside a
// nested call: wasm_exec.js gets the same effect from the exception its
// next access to the deleted instance throws.
var errAbort = errors.New("gojs: module exited during a nested call")

// alive panics with errAbort when the module can no longer continue. Every
// handler that may have run Go code (a nested resume) calls it before
// touching memory again.
func (i *Instance) alive() {
	if i.exited || i.broken != nil {
		panic(errAbort)
	}
}

// spAfter returns sp, re-read with getsp when Go code ran since gen was
// taken: a nested resume may have grown (moved) the goroutine's stack.
func (i *Instance) spAfter(sp uint32, gen uint64) uint32 {
	i.alive()
	if i.gen == gen {
		return sp
	}
	if err := i.fnGetsp.CallWithStack(i.ctx, i.spBuf[:]); err != nil {
		panic(err)
	}
	return uint32(i.spBuf[0])
}

// --- memory access ----------------------------------------------------

var errMemory = errors.New("gojs: memory access out of range")

func (i *Instance) getUint32(addr uint32) uint32 {
	v, ok := i.mem.ReadUint32Le(addr)
	if !ok {
		panic(errMemory)
	}
	return v
}

func (i *Instance) getInt64(addr uint32) int64 {
	v, ok := i.mem.ReadUint64Le(addr)
	if !ok {
		panic(errMemory)
	}
	return int64(v)
}

func (i *Instance) setInt64(addr uint32, v int64) {
	if !i.mem.WriteUint64Le(addr, uint64(v)) {
		panic(errMemory)
	}
}

func (i *Instance) setUint32(addr, v uint32) {
	if !i.mem.WriteUint32Le(addr, v) {
		panic(errMemory)
	}
}

func (i *Instance) setUint8(addr uint32, v byte) {
	if !i.mem.WriteByte(addr, v) {
		panic(errMemory)
	}
}

func (i *Instance) setBool(addr uint32, b bool) {
	if b {
		i.setUint8(addr, 1)
	} else {
		i.setUint8(addr, 0)
	}
}

func (i *Instance) loadValue(addr uint32) Value {
	r, ok := i.mem.ReadUint64Le(addr)
	if !ok {
		panic(errMemory)
	}
	return i.tab.value(r)
}

func (i *Instance) storeValue(addr uint32, v Value) {
	if !i.mem.WriteUint64Le(addr, i.tab.ref(v)) {
		panic(errMemory)
	}
}

// loadSlice returns a view of a Go []byte (ptr, len at addr); valid until
// the module runs again.
func (i *Instance) loadSlice(addr uint32) []byte {
	ptr, n := i.getInt64(addr), i.getInt64(addr+8)
	b, ok := i.mem.Read(uint32(ptr), uint32(n))
	if !ok || ptr < 0 || n < 0 {
		panic(errMemory)
	}
	return b
}

func (i *Instance) loadString(addr uint32) string {
	return decodeUTF8(i.loadSlice(addr))
}

func (i *Instance) loadSliceOfValues(addr uint32) []Value {
	ptr, n := i.getInt64(addr), i.getInt64(addr+8)
	if ptr < 0 || n < 0 || n > 1<<28 {
		panic(errMemory)
	}
	vals := make([]Value, n)
	for k := range vals {
		vals[k] = i.loadValue(uint32(ptr) + uint32(k)*8)
	}
	return vals
}

// thrown is the value a failed call throws in the module.
func thrown(err error) Value {
	var ex *Exception
	if errors.As(err, &ex) {
		return ex.Value
	}
	return NewError(err.Error())
}

// --- runtime ------------------------------------------------------------

// func wasmExit(code int32)
func (i *Instance) wasmExit(sp uint32) {
	i.exited = true
	i.code = int(int32(i.getUint32(sp + 8)))
	clear(i.timers)
}

// func wasmWrite(fd uintptr, p unsafe.Pointer, n int32)
func (i *Instance) wasmWrite(sp uint32) {
	fd, p, n := i.getInt64(sp+8), i.getInt64(sp+16), int32(i.getUint32(sp+24))
	b, ok := i.mem.Read(uint32(p), uint32(n))
	if !ok {
		panic(errMemory)
	}
	w := i.writerFor(fd)
	if w == nil {
		w = i.stderr
	}
	_, _ = w.Write(b)
}

// func nanotime1() int64
func (i *Instance) nanotime1(sp uint32) {
	// Like wasm_exec.js (timeOrigin + performance.now()): the epoch
	// time at start plus a monotonic duration, so it never goes back.
	i.setInt64(sp+8, i.start.UnixNano()+int64(time.Since(i.start)))
}

// func walltime() (sec int64, nsec int32)
func (i *Instance) walltime(sp uint32) {
	now := time.Now()
	i.setInt64(sp+8, now.Unix())
	i.setUint32(sp+16, uint32(now.Nanosecond()))
}

// func scheduleTimeoutEvent(delay int64) int32
func (i *Instance) scheduleTimeoutEvent(sp uint32) {
	delay := time.Duration(i.getInt64(sp+8)) * time.Millisecond
	id := i.nextTimer
	i.nextTimer++
	i.timers[id] = time.Now().Add(delay)
	i.setUint32(sp+16, uint32(id))
}

// func clearTimeoutEvent(id int32)
func (i *Instance) clearTimeoutEvent(sp uint32) {
	delete(i.timers, int32(i.getUint32(sp+8)))
}

// func getRandomData(r []byte)
func (i *Instance) getRandomData(sp uint32) {
	_, _ = rand.Read(i.loadSlice(sp + 8))
}

// --- syscall/js ---------------------------------------------------------

// func finalizeRef(v ref)
func (i *Instance) finalizeRef(sp uint32) {
	i.tab.finalize(i.getUint32(sp + 8))
}

// func stringVal(value string) ref
func (i *Instance) stringVal(sp uint32) {
	i.storeValue(sp+24, i.loadString(sp+8))
}

// func valueGet(v ref, p string) ref
func (i *Instance) valueGet(sp uint32) {
	gen := i.gen
	res, err := i.get(i.loadValue(sp+8), i.loadString(sp+16))
	if err != nil {
		panic(err) // an exception from Reflect.get escapes into wasm
	}
	sp = i.spAfter(sp, gen)
	i.storeValue(sp+32, res)
}

// func valueSet(v ref, p string, x ref)
func (i *Instance) valueSet(sp uint32) {
	if err := i.set(i.loadValue(sp+8), i.loadString(sp+16), i.loadValue(sp+32)); err != nil {
		panic(err)
	}
}

// func valueDelete(v ref, p string)
func (i *Instance) valueDelete(sp uint32) {
	if err := i.deleteProperty(i.loadValue(sp+8), i.loadString(sp+16)); err != nil {
		panic(err)
	}
}

// func valueIndex(v ref, i int) ref
func (i *Instance) valueIndex(sp uint32) {
	res, err := i.index(i.loadValue(sp+8), i.getInt64(sp+16))
	if err != nil {
		panic(err)
	}
	i.storeValue(sp+24, res)
}

// func valueSetIndex(v ref, i int, x ref)
func (i *Instance) valueSetIndex(sp uint32) {
	if err := i.setIndex(i.loadValue(sp+8), i.getInt64(sp+16), i.loadValue(sp+24)); err != nil {
		panic(err)
	}
}

// func valueCall(v ref, m string, args []ref) (ref, bool)
func (i *Instance) valueCall(sp uint32) {
	gen := i.gen
	v := i.loadValue(sp + 8)
	m := i.loadString(sp + 16)
	args := i.loadSliceOfValues(sp + 32)
	res, err := i.callMethod(v, m, args)
	sp = i.spAfter(sp, gen)
	i.storeResult(sp+56, res, err)
}

// func valueInvoke(v ref, args []ref) (ref, bool)
func (i *Instance) valueInvoke(sp uint32) {
	i.applyArgs(sp, func(v Value, args []Value) (Value, error) { return i.callValue(v, nil, args) })
}

// func valueNew(v ref, args []ref) (ref, bool)
func (i *Instance) valueNew(sp uint32) { i.applyArgs(sp, i.construct) }

// applyArgs is a call of the form (v ref, args []ref) (ref, bool): f
// applied to v and args, its result stored after the stack moved if the
// call grew it.
func (i *Instance) applyArgs(sp uint32, f func(v Value, args []Value) (Value, error)) {
	gen := i.gen
	v := i.loadValue(sp + 8)
	args := i.loadSliceOfValues(sp + 16)
	res, err := f(v, args)
	sp = i.spAfter(sp, gen)
	i.storeResult(sp+40, res, err)
}

// storeResult writes (ref, bool): the result, or the thrown value and false.
func (i *Instance) storeResult(addr uint32, res Value, err error) {
	if err != nil {
		i.storeValue(addr, thrown(err))
		i.setUint8(addr+8, 0)
		return
	}
	i.storeValue(addr, res)
	i.setUint8(addr+8, 1)
}

// func valueLength(v ref) int
func (i *Instance) valueLength(sp uint32) {
	n, err := i.length(i.loadValue(sp + 8))
	if err != nil {
		panic(err)
	}
	i.setInt64(sp+16, n)
}

// func valuePrepareString(v ref) (ref, int)
func (i *Instance) valuePrepareString(sp uint32) {
	b := []byte(ToString(i.loadValue(sp + 8))) // TextEncoder.encode(String(v))
	i.storeValue(sp+16, NewUint8Array(b))
	i.setInt64(sp+24, int64(len(b)))
}

// func valueLoadString(v ref, b []byte)
func (i *Instance) valueLoadString(sp uint32) {
	src, ok := i.loadValue(sp + 8).(*Uint8Array)
	if !ok {
		panic(errors.New("gojs: valueLoadString of a value that is not a prepared string"))
	}
	dst := i.loadSlice(sp + 16)
	if len(src.Data) > len(dst) {
		panic(errors.New("gojs: valueLoadString: offset is out of bounds"))
	}
	copy(dst, src.Data)
}

// func valueInstanceOf(v ref, t ref) bool
func (i *Instance) valueInstanceOf(sp uint32) {
	i.setBool(sp+24, i.instanceOf(i.loadValue(sp+8), i.loadValue(sp+16)))
}

// func copyBytesToGo(dst []byte, src ref) (int, bool)
func (i *Instance) copyBytesToGo(sp uint32) {
	dst := i.loadSlice(sp + 8)
	src, ok := i.loadValue(sp + 32).(*Uint8Array)
	if !ok {
		i.setUint8(sp+48, 0)
		return
	}
	n := copy(dst, src.Data)
	i.setInt64(sp+40, int64(n))
	i.setUint8(sp+48, 1)
}

// func copyBytesToJS(dst ref, src []byte) (int, bool)
func (i *Instance) copyBytesToJS(sp uint32) {
	dst, ok := i.loadValue(sp + 8).(*Uint8Array)
	if !ok {
		i.setUint8(sp+48, 0)
		return
	}
	n := copy(dst.Data, i.loadSlice(sp+16))
	i.setInt64(sp+40, int64(n))
	i.setUint8(sp+48, 1)
}
