//go:build js && wasm

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/hack-pad/safejs"
	"github.com/pling-go/pling/internal/jsonvalue"
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
	initPattern()
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

// decodeJSON reads JSON text as plain values, the one way jsonvalue.Plain
// reads them.
func decodeJSON(b []byte) (any, error) { return jsonvalue.PlainText(b) }

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

// lengthOf is v's member key, an array or a typed array, and its length.
func lengthOf(v safejs.Value, key string) (safejs.Value, int, error) {
	m, err := v.Get(key)
	if err != nil {
		return m, 0, err
	}
	n, err := m.Length()
	return m, n, err
}

// awaitCall calls v's method m and waits for what it returns, as callFn
// does for a function.
func awaitCall(v safejs.Value, m string, args ...any) (safejs.Value, error) {
	r, err := v.Call(m, args...)
	if err != nil {
		return safejs.Undefined(), err
	}
	return await(r)
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

// pageError is err, an exception the page's own function threw, with the
// text the page wrote: syscall/js spells a thrown Error "JavaScript error:
// <message>", and the runtime quotes the message (a declaration mistake's
// reason, pagebridge.CheckFailed).
func pageError(err error) error {
	if s, ok := strings.CutPrefix(err.Error(), "JavaScript error: "); ok {
		return errors.New(s)
	}
	return err
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
// the runtime saw (pagebridge.WithAuthorWarning).
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
