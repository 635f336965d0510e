//go:build js && wasm

// Promise work: a call's work on a worker goroutine, answered at once or through a Promise.

package main

import (
	"errors"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/hack-pad/safejs"
)

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
