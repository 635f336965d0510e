//go:build js && wasm

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/schema"
)

// The JS boundary: every value crosses as JSON text, every call goes
// through safejs so that a JS exception becomes a Go error, never a panic.

var (
	global  = safejs.Global()
	jsError safejs.Value
	// JSON.stringify and JSON.parse, invoked as functions: a method call
	// would look the name up (and decode it) on every call.
	jsStringify, jsParse safejs.Value
	jsPromise            safejs.Value // undefined on hosts without Promise
	jsApply              safejs.Value // Reflect.apply, or undefined on hosts without it
	jsObjectIs           safejs.Value // Object.is, or undefined on hosts without it
	jsUint8Array         safejs.Value // Uint8Array, or undefined on hosts without it
	// String.prototype.isWellFormed, else encodeURIComponent (which throws
	// on a lone surrogate), or undefined on hosts with neither.
	jsIsWellFormed, jsEncodeURIComponent safejs.Value
	// String.prototype.lastIndexOf, or undefined: s.lastIndexOf("") is
	// s.length, read without copying s (syscall/js reads no property of a
	// string).
	jsLastIndexOf safejs.Value
	// stringRefsShared: the host gives a JS string equal to one Go holds
	// that one's reference (wasm_exec.js keeps one per value), so that
	// Equal, a comparison in Go, tells whether two such strings are equal.
	stringRefsShared bool
)

func initJS() error {
	jsJSON, err := global.Get("JSON")
	if err != nil {
		return err
	}
	if jsStringify, err = jsJSON.Get("stringify"); err != nil {
		return err
	}
	if jsParse, err = jsJSON.Get("parse"); err != nil {
		return err
	}
	if jsError, err = global.Get("Error"); err != nil {
		return err
	}
	if jsPromise, err = global.Get("Promise"); err != nil {
		return err
	}
	jsObjectIs = safejs.Undefined()
	if object, err := global.Get("Object"); err == nil && object.Type() == safejs.TypeFunction {
		if f, err := object.Get("is"); err == nil && f.Type() == safejs.TypeFunction {
			jsObjectIs = f
		}
	}
	jsUint8Array, jsIsWellFormed, jsEncodeURIComponent, jsLastIndexOf = safejs.Undefined(), safejs.Undefined(), safejs.Undefined(), safejs.Undefined()
	if u8, err := global.Get("Uint8Array"); err == nil && u8.Type() == safejs.TypeFunction {
		jsUint8Array = u8
	}
	if str, err := global.Get("String"); err == nil && str.Type() == safejs.TypeFunction {
		if proto, err := str.Get("prototype"); err == nil && proto.Type() == safejs.TypeObject {
			if f, err := proto.Get("isWellFormed"); err == nil && f.Type() == safejs.TypeFunction {
				jsIsWellFormed = f
			}
			if f, err := proto.Get("lastIndexOf"); err == nil && f.Type() == safejs.TypeFunction {
				jsLastIndexOf = f
			}
		}
	}
	if f, err := global.Get("encodeURIComponent"); err == nil && f.Type() == safejs.TypeFunction {
		jsEncodeURIComponent = f
	}
	a, errA := jsParse.Invoke(`"pling"`)
	b, errB := jsParse.Invoke(`"pling"`)
	stringRefsShared = errA == nil && errB == nil && a.Type() == safejs.TypeString && a.Equal(b)
	jsApply = safejs.Undefined()
	if reflect, err := global.Get("Reflect"); err == nil && reflect.Type() == safejs.TypeObject {
		if f, err := reflect.Get("apply"); err == nil && f.Type() == safejs.TypeFunction {
			jsApply = f
		}
	}
	return nil
}

// sameText reports whether a, a JS string Go holds, and the JS string b
// are equal: with no call into JS where the host shares string references
// (stringRefsShared), else through Object.is; false where that is missing.
func sameText(a, b safejs.Value) bool {
	if a.Type() != safejs.TypeString || b.Type() != safejs.TypeString {
		return false
	}
	if a.Equal(b) {
		return true
	}
	if stringRefsShared || jsObjectIs.Type() != safejs.TypeFunction {
		return false
	}
	same, err := jsObjectIs.Invoke(a, b)
	if err != nil {
		return false
	}
	eq, _ := same.Bool()
	return eq
}

// toGo converts a JS value to Go values through JSON.stringify. undefined
// (and functions, which JSON drops) become nil; numbers stay json.Number.
// null, booleans and strings, which a handler commonly returns, are read
// directly: the same Go value as through JSON (a lone surrogate becomes
// U+FFFD either way), without the round trip.
func toGo(v safejs.Value) (any, error) {
	switch v.Type() {
	case safejs.TypeUndefined, safejs.TypeFunction, safejs.TypeNull:
		return nil, nil
	case safejs.TypeBoolean:
		return v.Bool()
	case safejs.TypeString:
		return v.String()
	}
	s, err := jsStringify.Invoke(v)
	if err != nil {
		return nil, err
	}
	if s.IsUndefined() {
		return nil, nil
	}
	text, err := s.String()
	if err != nil {
		return nil, err
	}
	return decodeJSON([]byte(text))
}

// decodeJSON reads JSON text as plain values, the one way schema.Plain
// reads them.
func decodeJSON(b []byte) (any, error) { return schema.PlainText(b) }

// toJS converts Go values to a JS value through JSON.parse.
func toJS(v any) (safejs.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return safejs.Undefined(), err
	}
	return jsParse.Invoke(string(b))
}

// callFn calls a JS function and, when it returns a thenable, waits for it
// without blocking the event loop: the caller is a goroutine, never a JS
// callback (docs/hosts.md §1, "Never block the JS event loop from Go").
func callFn(fn safejs.Value, args ...any) (safejs.Value, error) {
	v, err := fn.Invoke(args...)
	if err != nil {
		return safejs.Undefined(), err
	}
	return await(v)
}

// await resolves a thenable by attaching then/catch callbacks that send on
// a channel; a non-thenable is returned as it is.
//
// Page code may write a then that calls its callbacks more than once, or
// both, now or later. The first settlement wins and the rest are ignored:
// where the host has Promise, the callbacks go to Promise.resolve(v).then,
// whose resolving functions settle once, so each Go callback runs at most
// once and none runs after it is released; the Go side also keeps only
// the first settlement, and never blocks a JS callback on the channel.
func await(v safejs.Value) (safejs.Value, error) {
	if v.Type() != safejs.TypeObject {
		return v, nil
	}
	then, err := v.Get("then")
	if err != nil || then.Type() != safejs.TypeFunction {
		return v, nil
	}
	type result struct {
		v   safejs.Value
		err error
	}
	ch := make(chan result, 1)
	var settled atomic.Bool
	settle := func(r result) {
		if settled.CompareAndSwap(false, true) {
			ch <- r // the buffer holds the one result: this never blocks
		}
	}
	ok, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		r := safejs.Undefined()
		if len(args) > 0 {
			r = args[0]
		}
		settle(result{v: r})
		return nil
	})
	if err != nil {
		return safejs.Undefined(), err
	}
	defer ok.Release()
	fail, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		msg := "rejected"
		if len(args) > 0 {
			msg = describeJSError(args[0])
		}
		settle(result{err: errors.New(msg)})
		return nil
	})
	if err != nil {
		return safejs.Undefined(), err
	}
	defer fail.Release()
	if jsPromise.Type() == safejs.TypeFunction {
		p, err := jsPromise.Call("resolve", v)
		if err != nil {
			return safejs.Undefined(), err
		}
		v = p
	}
	if _, err := v.Call("then", ok.Value(), fail.Value()); err != nil {
		settle(result{err: err})
	}
	r := <-ch
	return r.v, r.err
}

// describeJSError gives the message of a thrown or rejected value.
func describeJSError(v safejs.Value) string {
	if v.Type() == safejs.TypeObject {
		if m, err := v.Get("message"); err == nil && m.Type() == safejs.TypeString {
			if s, err := m.String(); err == nil {
				return s
			}
		}
	}
	if v.Type() == safejs.TypeString {
		if s, err := v.String(); err == nil {
			return s
		}
	}
	return "rejected"
}

// errorValue makes a JS Error for a Go error (returned to JS, thrown by the
// shim).
func errorValue(err error) safejs.Value {
	v, e := jsError.New(err.Error())
	if e != nil {
		return safejs.Undefined()
	}
	return v
}

// consoleWarn tells the page's author, on the console, about a mistake
// the runtime saw (runtime.WithAuthorWarning).
func consoleWarn(msg string) {
	if console, err := safejs.Global().Get("console"); err == nil && console.Type() == safejs.TypeObject {
		_, _ = console.Call("warn", msg)
	}
}

// authorText is an error as the page's author reads it in the console:
// prefixed "pling: " (or "pling.kind: ") exactly once, however many
// layers added "pling: " on the way (never "pling: pling: …").
func authorText(err error) string {
	s := err.Error()
	for strings.HasPrefix(s, "pling: ") {
		s = s[len("pling: "):]
	}
	if strings.HasPrefix(s, "pling.") {
		return s
	}
	return "pling: " + s
}

// fnOf registers a Go function for JS. A panic in it becomes a thrown JS
// Error naming the function, never a crash of the module.
func fnOf(name string, fn func(args []safejs.Value) (any, error)) safejs.Func {
	f, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) (out any) {
		defer func() {
			if r := recover(); r != nil {
				out = map[string]any{"error": fmt.Sprintf("pling: internal error in %s", name)}
			}
		}()
		v, err := fn(args)
		if err != nil {
			return map[string]any{"error": authorText(err)}
		}
		return v
	})
	if err != nil {
		panic(err)
	}
	return f
}

func argString(args []safejs.Value, i int) (string, error) {
	if i >= len(args) || args[i].Type() != safejs.TypeString {
		return "", fmt.Errorf("argument %d must be a string", i+1)
	}
	return args[i].String()
}

// argText reads argument i, request text: a JS string, or a Uint8Array
// of the text's exact bytes, copied as they are (so that bytes that are
// not UTF-8 reach the runtime unchanged, as on a Go host). Text whose
// length alone shows it to be longer than max — a Uint8Array's length, or
// a string's UTF-16 length, which its UTF-8 never undercuts — is not
// copied: refused is schema.ReasonTooLarge. A string with a lone surrogate
// has no UTF-8 form, and syscall/js would write U+FFFD in its place:
// refused is schema.ReasonInvalidUTF8, as the runtime refuses bytes that
// are not UTF-8 (unless the text is too large, which the runtime checks
// first).
func argText(args []safejs.Value, i, max int) (text []byte, refused string, err error) {
	if i >= len(args) {
		return nil, "", fmt.Errorf("argument %d must be a string or a Uint8Array", i+1)
	}
	v := args[i]
	switch v.Type() {
	case safejs.TypeString:
		if stringLength(v) > max {
			return nil, schema.ReasonTooLarge, nil
		}
		s, err := v.String()
		if err != nil {
			return nil, "", err
		}
		if len(s) <= max && strings.Contains(s, "\uFFFD") && !wellFormed(v) {
			return nil, schema.ReasonInvalidUTF8, nil
		}
		return []byte(s), "", nil
	case safejs.TypeObject:
		if jsUint8Array.Type() != safejs.TypeFunction {
			break
		}
		if is, err := v.InstanceOf(jsUint8Array); err != nil || !is {
			break
		}
		n, err := v.Length()
		if err != nil {
			return nil, "", err
		}
		if n > max {
			return nil, schema.ReasonTooLarge, nil
		}
		b := make([]byte, n)
		if _, err := safejs.CopyBytesToGo(b, v); err != nil {
			return nil, "", err
		}
		return b, "", nil
	}
	return nil, "", fmt.Errorf("argument %d must be a string or a Uint8Array", i+1)
}

// argStringMax is argString for text the runtime limits to max bytes: a
// string longer than that by its UTF-16 length is not copied (tooLarge).
func argStringMax(args []safejs.Value, i, max int) (s string, tooLarge bool, err error) {
	if i < len(args) && args[i].Type() == safejs.TypeString && stringLength(args[i]) > max {
		return "", true, nil
	}
	s, err = argString(args, i)
	return s, false, err
}

// stringLength is the UTF-16 length of the JS string s, read in one call
// without copying s; -1 where the host lacks String.prototype.lastIndexOf
// (a Go host, whose strings are not copied as UTF-16 anyway).
func stringLength(s safejs.Value) int {
	if jsLastIndexOf.Type() != safejs.TypeFunction {
		return -1
	}
	n, err := jsLastIndexOf.Call("call", s, "")
	if err != nil || n.Type() != safejs.TypeNumber {
		return -1
	}
	i, _ := n.Int()
	return i
}

// wellFormed reports whether the JS string s is well-formed UTF-16 (no
// lone surrogate). A host with neither isWellFormed nor
// encodeURIComponent (a Go host, whose strings are bytes) has no lone
// surrogates to find.
func wellFormed(s safejs.Value) bool {
	if jsIsWellFormed.Type() == safejs.TypeFunction {
		ok, err := jsIsWellFormed.Call("call", s)
		if err != nil {
			return false
		}
		b, _ := ok.Bool()
		return b
	}
	if jsEncodeURIComponent.Type() == safejs.TypeFunction {
		_, err := jsEncodeURIComponent.Invoke(s)
		return err == nil
	}
	return true
}

func argInt(args []safejs.Value, i int) (int, error) {
	if i >= len(args) || args[i].Type() != safejs.TypeNumber {
		return 0, fmt.Errorf("argument %d must be a number", i+1)
	}
	return args[i].Int()
}

// promise runs work and gives JS its string result: the text, or a Promise
// of it, or, with a trailing callback argument cb(error, result) instead, a
// call of cb and undefined (for hosts without Promise).
//
// The work runs on a worker goroutine, never on the JS callback itself: it
// may wait for a JS promise (a handler's), and a callback that blocks
// would block the event loop (docs/hosts.md §1). The callback yields once so
// that the worker runs at once; when the work finishes without waiting for
// JS — the common case, a handler that returns a plain value — the result
// is returned from the same call (the text itself, or cb called before the
// call returns), without a Promise or a second hop from JS into Go. An
// error is a rejected Promise. Otherwise the result is a Promise the worker
// settles when the work finishes.
func promise(args []safejs.Value, work func() (string, error)) (any, error) {
	var cb safejs.Value
	hasCB := false
	if n := len(args); n > 0 && args[n-1].Type() == safejs.TypeFunction {
		cb, hasCB = args[n-1], true
	}
	if !hasCB && jsPromise.Type() != safejs.TypeFunction {
		return nil, errors.New("pling: this host has no Promise; pass a callback")
	}
	t := &task{work: work}
	t.dispatch()
	s, err, done := t.wait()
	if hasCB {
		settle := func(s string, err error) {
			if err != nil {
				_, _ = cb.Invoke(err.Error(), safejs.Undefined())
				return
			}
			_, _ = cb.Invoke(safejs.Null(), s)
		}
		if done {
			settle(s, err)
		} else {
			t.later(settle)
		}
		return nil, nil
	}
	if done {
		if err != nil {
			return jsPromise.Call("reject", errorValue(err))
		}
		// The text itself: every JS value Go makes or gets (a Promise
		// too) costs a reference with a finalizer, and the shim's then
		// takes a value as well as a Promise.
		return s, nil
	}
	var resolve, reject safejs.Value
	exec, err := safejs.FuncOf(func(_ safejs.Value, pargs []safejs.Value) any {
		resolve, reject = pargs[0], pargs[1]
		return nil
	})
	if err != nil {
		return nil, err
	}
	p, err := jsPromise.New(exec.Value())
	exec.Release()
	if err != nil {
		return nil, err
	}
	t.later(func(s string, err error) {
		if err != nil {
			_, _ = reject.Invoke(errorValue(err))
			return
		}
		_, _ = resolve.Invoke(s)
	})
	return p, nil
}

// task is one piece of promise work on a worker goroutine.
type task struct {
	work func() (string, error)

	mu      sync.Mutex
	started bool
	done    bool
	out     string
	err     error
	settle  func(string, error) // set by later when the caller returned without the result
}

// idle hands a task to a worker goroutine waiting for one; idleWorkers
// counts them. A worker that finds maxIdleWorkers others idle ends, so a
// burst of calls that wait on JS (handoffs, approvals) leaves few behind.
var (
	idle        = make(chan *task)
	idleWorkers atomic.Int32
)

const maxIdleWorkers = 2

// dispatch gives t to an idle worker, or starts one.
func (t *task) dispatch() {
	select {
	case idle <- t:
	default:
		go worker(t)
	}
}

func worker(t *task) {
	for {
		t.run()
		if idleWorkers.Add(1) > maxIdleWorkers {
			idleWorkers.Add(-1)
			return
		}
		t = <-idle
		idleWorkers.Add(-1)
	}
}

func (t *task) run() {
	t.mu.Lock()
	t.started = true
	t.mu.Unlock()
	s, err := safeWork(t.work)
	t.mu.Lock()
	t.done, t.out, t.err = true, s, err
	settle := t.settle
	t.mu.Unlock()
	if settle != nil {
		settle(s, err)
	}
}

// wait yields to the worker until it has started t. js/wasm has one
// thread, so when the caller runs again the work has finished or has
// stopped: it waits for JS, a timer or a lock (or, rarely, was preempted),
// and then the caller leaves the result to later. It reports the result if
// the work finished.
func (t *task) wait() (string, error, bool) {
	for range 8 {
		goruntime.Gosched()
		t.mu.Lock()
		started, done := t.started, t.done
		s, err := t.out, t.err
		t.mu.Unlock()
		if done {
			return s, err, true
		}
		if started {
			break
		}
	}
	return "", nil, false
}

// later has settle called with the result: now if the work has finished
// in the meantime, else by the worker when it does.
func (t *task) later(settle func(string, error)) {
	t.mu.Lock()
	if !t.done {
		t.settle = settle
		t.mu.Unlock()
		return
	}
	s, err := t.out, t.err
	t.mu.Unlock()
	settle(s, err)
}

// safeWork runs work; a panic becomes an error, and the module keeps
// serving.
func safeWork(work func() (string, error)) (s string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("pling: internal error")
		}
	}()
	return work()
}
