//go:build js && wasm

package main

import (
	"errors"
	"sync"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/runtime"
)

// The page bridge: the shim's window.pling calls these with JSON text and
// JS functions; handlers are called back through safejs, and async results
// are promises.
//
// main.go publishes the calls; they live by job: pageconfig.go (init),
// pagereader.go (the page and feedback hooks), declare.go (declare,
// dispose), actions.go (handlers, cancel) and ui.go (handoff, approval,
// messages). This file holds the page's state they share.

var page = struct {
	sync.Mutex
	rt      *runtime.Runtime
	handles map[int]*runtime.Handle
	next    int
	hooks   safejs.Value // {handoff, approve, page, feedback} from the shim
	// refused are the declarations refused so far, as the author read
	// them on the console (lint; bounded).
	refused []string
}{handles: map[int]*runtime.Handle{}}

func pageRuntime() (*runtime.Runtime, error) {
	page.Lock()
	defer page.Unlock()
	if page.rt == nil {
		return nil, errors.New("pling: init has not been called")
	}
	return page.rt, nil
}

func fnField(obj safejs.Value, name string) safejs.Value {
	if obj.Type() != safejs.TypeObject {
		return safejs.Undefined()
	}
	f, err := obj.Get(name)
	if err != nil || f.Type() != safejs.TypeFunction {
		return safejs.Undefined()
	}
	return f
}

func mustJS(v any) safejs.Value {
	j, err := toJS(v)
	if err != nil {
		return safejs.Undefined()
	}
	return j
}
