//go:build js && wasm

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hack-pad/safejs"
)

// The JS boundary: every value crosses as JSON text, every call goes
// through safejs so that a JS exception becomes a Go error, never a panic.

var (
	global  = safejs.Global()
	jsJSON  safejs.Value
	jsError safejs.Value
)

func initJS() error {
	var err error
	if jsJSON, err = global.Get("JSON"); err != nil {
		return err
	}
	jsError, err = global.Get("Error")
	return err
}

// toGo converts a JS value to Go values through JSON.stringify. undefined
// (and functions, which JSON drops) become nil; numbers stay json.Number.
func toGo(v safejs.Value) (any, error) {
	if v.IsUndefined() || v.Type() == safejs.TypeFunction {
		return nil, nil
	}
	s, err := jsJSON.Call("stringify", v)
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

func decodeJSON(b []byte) (any, error) {
	var out any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// toJS converts Go values to a JS value through JSON.parse.
func toJS(v any) (safejs.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return safejs.Undefined(), err
	}
	return jsJSON.Call("parse", string(b))
}

// callFn calls a JS function and, when it returns a thenable, waits for it
// without blocking the event loop: the caller is a goroutine, never a JS
// callback (PLING.md §10, "Never block the JS event loop from Go").
func callFn(fn safejs.Value, args ...any) (safejs.Value, error) {
	v, err := fn.Invoke(args...)
	if err != nil {
		return safejs.Undefined(), err
	}
	return await(v)
}

// await resolves a thenable by attaching then/catch callbacks that send on
// a channel; a non-thenable is returned as it is.
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
	ok, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		r := safejs.Undefined()
		if len(args) > 0 {
			r = args[0]
		}
		ch <- result{v: r}
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
		ch <- result{err: errors.New(msg)}
		return nil
	})
	if err != nil {
		return safejs.Undefined(), err
	}
	defer fail.Release()
	if _, err := v.Call("then", ok.Value(), fail.Value()); err != nil {
		return safejs.Undefined(), err
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
			return map[string]any{"error": err.Error()}
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

func argInt(args []safejs.Value, i int) (int, error) {
	if i >= len(args) || args[i].Type() != safejs.TypeNumber {
		return 0, fmt.Errorf("argument %d must be a number", i+1)
	}
	return args[i].Int()
}

// promise runs work in a goroutine and returns a JS Promise of its string
// result; with a trailing callback argument cb(error, result) instead, it
// calls back and returns undefined (for hosts without Promise).
func promise(args []safejs.Value, work func() (string, error)) (any, error) {
	if n := len(args); n > 0 && args[n-1].Type() == safejs.TypeFunction {
		cb := args[n-1]
		go func() {
			s, err := safeWork(work)
			if err != nil {
				_, _ = cb.Invoke(err.Error(), safejs.Undefined())
				return
			}
			_, _ = cb.Invoke(safejs.Null(), s)
		}()
		return nil, nil
	}
	ctor, err := global.Get("Promise")
	if err != nil {
		return nil, err
	}
	var exec safejs.Func
	exec, err = safejs.FuncOf(func(_ safejs.Value, pargs []safejs.Value) any {
		resolve, reject := pargs[0], pargs[1]
		go func() {
			defer exec.Release()
			s, err := safeWork(work)
			if err != nil {
				_, _ = reject.Invoke(errorValue(err))
				return
			}
			_, _ = resolve.Invoke(s)
		}()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ctor.New(exec.Value())
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
