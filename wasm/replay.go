//go:build js && wasm

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/wasm/internal/replaystore"
)

// The page's replay guard: consumed ids in localStorage, under a Web Lock,
// so that they survive a reload and hold across the origin's tabs
// (replaystore). RATIONALE.md, "Why does the page keep consumed ids in
// localStorage?".

// replayLockName is the Web Lock every tab of the origin takes around the
// guard's keys.
const replayLockName = "pling.replay"

// replayLockWaitMs bounds the wait for the lock: a tab that cannot get it
// refuses the request (REPLAY_GUARD_UNAVAILABLE) instead of hanging.
const replayLockWaitMs = 5000

// pageReplayGuard chooses the guard for the page runtime from the
// configuration's replayGuard: "" (where localStorage and the Web Locks API
// work, the store; in another browser page, a guard that refuses every
// request; elsewhere, Node or a Go host, nil, the built-in memory guard)
// or "memory" (the built-in guard: ids live as long as the module).
func pageReplayGuard(mode string) (runtime.ReplayGuard, error) {
	switch mode {
	case "memory":
		return nil, nil
	case "":
	default:
		return nil, fmt.Errorf(`pling: replayGuard must be "memory" or left out, not %q`, mode)
	}
	if st, ok := webReplayStore(); ok {
		return replaystore.New(st, replaystore.DefaultCapacity, replaystore.DefaultSessionCapacity), nil
	}
	if doc, err := global.Get("document"); err != nil || doc.Type() != safejs.TypeObject {
		return nil, nil
	}
	if console, err := global.Get("console"); err == nil && console.Type() == safejs.TypeObject {
		_, _ = console.Call("warn", `pling: this page has no usable localStorage or Web Locks API (navigator.locks needs a secure context), `+
			`so request ids cannot be kept across reloads and tabs; every request is refused with REPLAY_GUARD_UNAVAILABLE. `+
			`Serve the page over https, or configure replayGuard: "memory" to keep ids for one page load only.`)
	}
	return unavailableGuard{}, nil
}

// webReplayStore finds localStorage and navigator.locks, and checks that
// storage can be read (a sandboxed frame throws on access).
func webReplayStore() (webStore, bool) {
	storage, err := global.Get("localStorage")
	if err != nil || storage.Type() != safejs.TypeObject {
		return webStore{}, false
	}
	if _, err := storage.Call("getItem", "pling.replay"); err != nil {
		return webStore{}, false
	}
	nav, err := global.Get("navigator")
	if err != nil || nav.Type() != safejs.TypeObject {
		return webStore{}, false
	}
	locks, err := nav.Get("locks")
	if err != nil || locks.Type() != safejs.TypeObject {
		return webStore{}, false
	}
	if req, err := locks.Get("request"); err != nil || req.Type() != safejs.TypeFunction {
		return webStore{}, false
	}
	return webStore{storage: storage, locks: locks}, true
}

// webStore is replaystore.Store over localStorage and navigator.locks.
type webStore struct{ storage, locks safejs.Value }

// Locked runs fn inside the lock's callback, synchronously: localStorage
// is synchronous, so the lock is held only while fn runs and is released
// when the callback returns, whatever fn does. The caller is a worker
// goroutine (the bridge's promise), which waits for the lock's promise
// without blocking the event loop.
func (w webStore) Locked(_ context.Context, fn func(replaystore.Tx) error) error {
	var ferr error
	ran := false
	cb, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
		ran = true
		ferr = runTx(fn, webTx{w.storage})
		return nil
	})
	if err != nil {
		return err
	}
	defer cb.Release()
	opts, err := newObject(map[string]any{"mode": "exclusive"})
	if err != nil {
		return err
	}
	if as, err := global.Get("AbortSignal"); err == nil && as.Type() == safejs.TypeFunction {
		if sig, err := as.Call("timeout", replayLockWaitMs); err == nil && sig.Type() == safejs.TypeObject {
			_ = opts.Set("signal", sig)
		}
	}
	p, err := w.locks.Call("request", replayLockName, opts, cb.Value())
	if err != nil {
		return err
	}
	if _, err := await(p); err != nil {
		return err
	}
	if !ran {
		return errors.New("pling: the replay lock was not granted")
	}
	return ferr
}

// runTx runs fn; a panic is an error, so the lock's callback always
// returns.
func runTx(fn func(replaystore.Tx) error, tx replaystore.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("pling: the replay store failed")
		}
	}()
	return fn(tx)
}

// webTx is localStorage; a thrown exception (QuotaExceededError,
// SecurityError) is an error.
type webTx struct{ storage safejs.Value }

func (t webTx) Get(key string) (string, bool, error) {
	v, err := t.storage.Call("getItem", key)
	if err != nil {
		return "", false, err
	}
	if v.Type() != safejs.TypeString {
		return "", false, nil
	}
	s, err := v.String()
	return s, err == nil, err
}

func (t webTx) Set(key, value string) error {
	_, err := t.storage.Call("setItem", key, value)
	return err
}

func (t webTx) Remove(key string) error {
	_, err := t.storage.Call("removeItem", key)
	return err
}

// unavailableGuard refuses every request: a browser page that cannot keep
// ids across reloads fails closed.
type unavailableGuard struct{}

func (unavailableGuard) Consume(context.Context, string, string, int64, int64) (*runtime.ReplayRecord, error) {
	return nil, errors.New("pling: no localStorage or Web Locks API on this page")
}

func (unavailableGuard) Complete(context.Context, string, string, runtime.ReplayRecord) {}
