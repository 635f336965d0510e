//go:build js && wasm

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/wasm/internal/replaystore"
)

// The page's replay guard: consumed ids in IndexedDB, under a Web Lock,
// so that they survive a reload and hold across the origin's tabs
// (replaystore). RATIONALE.md, "Why does the page keep consumed ids in
// IndexedDB under a Web Lock?".

const (
	// replayLockName is the Web Lock every tab of the origin takes around
	// the guard's keys.
	replayLockName = "pling.replay"
	// replayLockWaitMs bounds the wait for the lock: a tab that cannot get
	// it refuses the request (REPLAY_GUARD_UNAVAILABLE) instead of hanging.
	replayLockWaitMs = 5000
	// replayDB and replayObjects are the database and its one object store
	// (string keys to string values).
	replayDB      = "pling.replay"
	replayObjects = "kv"
	// replayStoreWait bounds each IndexedDB request, so that a store that
	// never answers cannot keep the lock from the other tabs.
	replayStoreWait = 5 * time.Second
)

// pageReplayGuard chooses the page runtime's shared replay guard (the
// one write and destructive invokes consume their ids in, beside the
// built-in memory guard every request goes through) from the
// configuration's replayGuard: "" (where IndexedDB and the Web Locks API
// exist, the store; in another browser page, a guard that refuses those
// invokes; elsewhere, Node or a Go host, nil: none) or "memory" (none:
// ids live as long as the module).
func pageReplayGuard(mode string) (runtime.ReplayGuard, error) {
	switch mode {
	case "memory":
		return nil, nil
	case "":
	default:
		return nil, fmt.Errorf(`pling: replayGuard must be "memory" or left out, not %q`, mode)
	}
	if st, ok := webReplayStore(); ok {
		return laterComplete{replaystore.New(st, replaystore.DefaultCapacity, replaystore.DefaultSessionCapacity)}, nil
	}
	if doc, err := global.Get("document"); err != nil || doc.Type() != safejs.TypeObject {
		return nil, nil
	}
	if console, err := global.Get("console"); err == nil && console.Type() == safejs.TypeObject {
		_, _ = console.Call("warn", `pling: this page has no IndexedDB or Web Locks API (navigator.locks needs a secure context), `+
			`so request ids cannot be kept across reloads and tabs; every invoke of a write or destructive action is refused with REPLAY_GUARD_UNAVAILABLE. `+
			`Serve the page over https, or configure replayGuard: "memory" to keep ids for one page load only.`)
	}
	return unavailableGuard{}, nil
}

// webReplayStore finds indexedDB and navigator.locks (a sandboxed frame
// throws on access).
func webReplayStore() (*webStore, bool) {
	idb, err := global.Get("indexedDB")
	if err != nil || idb.Type() != safejs.TypeObject {
		return nil, false
	}
	nav, err := global.Get("navigator")
	if err != nil || nav.Type() != safejs.TypeObject {
		return nil, false
	}
	locks, err := nav.Get("locks")
	if err != nil || locks.Type() != safejs.TypeObject {
		return nil, false
	}
	if req, err := locks.Get("request"); err != nil || req.Type() != safejs.TypeFunction {
		return nil, false
	}
	return &webStore{idb: idb, locks: locks, db: safejs.Undefined()}, true
}

// webStore is replaystore.Store over IndexedDB and navigator.locks.
// localStorage would be simpler, but Chromium keeps a copy of it in each
// renderer and tells the others of a write later: a tab that takes the
// lock just after another released it can read the value from before the
// write (the Chromium test of two tabs at once ran the id twice).
// IndexedDB is read from the browser's one copy.
type webStore struct {
	idb, locks safejs.Value
	db         safejs.Value // the open database, or undefined; used only under the lock
}

// Locked takes the lock and runs fn on this (worker) goroutine while the
// lock's callback waits on a promise that Go resolves when fn returns, so
// fn may wait for IndexedDB. The lock is released when that promise
// settles, or by the browser when the page goes away.
func (w *webStore) Locked(_ context.Context, fn func(replaystore.Tx) error) error {
	var release safejs.Value
	exec, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		release = args[0]
		return nil
	})
	if err != nil {
		return err
	}
	held, err := jsPromise.New(exec.Value())
	exec.Release()
	if err != nil {
		return err
	}
	granted := make(chan struct{}, 1)
	cb, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
		select {
		case granted <- struct{}{}:
		default:
		}
		return held
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
	settled := make(chan error, 1)
	go func() {
		_, err := await(p)
		settled <- err
	}()
	select {
	case <-granted:
	case err := <-settled:
		if err == nil {
			err = errors.New("pling: the replay lock was not granted")
		}
		return err
	}
	ferr := runTx(fn, w)
	_, _ = release.Invoke()
	<-settled
	return ferr
}

// runTx runs fn; a panic is an error, so the lock is always released.
func runTx(fn func(replaystore.Tx) error, w *webStore) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("pling: the replay store failed")
		}
	}()
	if err := w.open(); err != nil {
		return err
	}
	err = fn(w)
	if err != nil && !errors.Is(err, replaystore.ErrFull) && !errors.Is(err, replaystore.ErrSessionFull) {
		// The database may have been closed under us (storage cleared):
		// close this connection and open another next time.
		_, _ = w.db.Call("close")
		w.db = safejs.Undefined()
	}
	return err
}

// open opens the database once (creating its object store).
func (w *webStore) open() error {
	if w.db.Type() == safejs.TypeObject {
		return nil
	}
	req, err := w.idb.Call("open", replayDB, 1)
	if err != nil {
		return err
	}
	upgrade, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
		if db, err := req.Get("result"); err == nil {
			_, _ = db.Call("createObjectStore", replayObjects)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer upgrade.Release()
	if err := req.Set("onupgradeneeded", upgrade.Value()); err != nil {
		return err
	}
	if err := idbWait(req); err != nil {
		return err
	}
	db, err := req.Get("result")
	if err != nil {
		return err
	}
	w.db = db
	return nil
}

// Get implements replaystore.Tx: one read-only transaction.
func (w *webStore) Get(keys ...string) ([]string, []bool, error) {
	tx, objects, err := w.transaction("readonly")
	if err != nil {
		return nil, nil, err
	}
	reqs := make([]safejs.Value, len(keys))
	for i, k := range keys {
		if reqs[i], err = objects.Call("get", k); err != nil {
			return nil, nil, err
		}
	}
	if err := idbWait(tx); err != nil {
		return nil, nil, err
	}
	vals, oks := make([]string, len(keys)), make([]bool, len(keys))
	for i, req := range reqs {
		v, err := req.Get("result")
		if err != nil {
			return nil, nil, err
		}
		switch v.Type() {
		case safejs.TypeUndefined:
		case safejs.TypeString:
			if vals[i], err = v.String(); err != nil {
				return nil, nil, err
			}
			oks[i] = true
		default:
			return nil, nil, errors.New("pling: the replay store holds a value it did not write")
		}
	}
	return vals, oks, nil
}

// Write implements replaystore.Tx: one read-write transaction, done when
// it has committed (QuotaExceededError aborts it, and nothing is written).
func (w *webStore) Write(changes []replaystore.Change) error {
	tx, objects, err := w.transaction("readwrite")
	if err != nil {
		return err
	}
	for _, c := range changes {
		if c.Remove {
			_, err = objects.Call("delete", c.Key)
		} else {
			_, err = objects.Call("put", c.Value, c.Key)
		}
		if err != nil {
			_, _ = tx.Call("abort")
			return err
		}
	}
	return idbWait(tx)
}

func (w *webStore) transaction(mode string) (tx, objects safejs.Value, err error) {
	if tx, err = w.db.Call("transaction", replayObjects, mode); err != nil {
		return tx, objects, err
	}
	objects, err = tx.Call("objectStore", replayObjects)
	return tx, objects, err
}

// idbWait waits for an IndexedDB request (success or error) or
// transaction (complete, error or abort) to finish; any way but success
// or complete is an error.
func idbWait(target safejs.Value) error {
	done := make(chan error, 1)
	var fns []safejs.Func
	var events []string
	defer func() {
		// Unhooked first: an error event is followed by abort, which
		// must not call a released function.
		for _, ev := range events {
			_ = target.Set("on"+ev, safejs.Null())
		}
		for _, f := range fns {
			f.Release()
		}
	}()
	on := func(event string, err error) error {
		f, e := safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
			select {
			case done <- err:
			default:
			}
			return nil
		})
		if e != nil {
			return e
		}
		fns, events = append(fns, f), append(events, event)
		return target.Set("on"+event, f.Value())
	}
	failed := errors.New("pling: the replay store failed")
	for _, ev := range []struct {
		name string
		err  error
	}{{"success", nil}, {"complete", nil}, {"error", failed}, {"abort", failed}} {
		if err := on(ev.name, ev.err); err != nil {
			return err
		}
	}
	select {
	case err := <-done:
		return err
	case <-time.After(replayStoreWait):
		return errors.New("pling: the replay store did not answer")
	}
}

// unavailableGuard refuses every request that asks it (the invokes that
// can change something): a browser page that cannot keep ids across
// reloads fails closed.
type unavailableGuard struct{}

func (unavailableGuard) Consume(context.Context, string, string, int64, int64) (*runtime.ReplayRecord, error) {
	return nil, errors.New("pling: no IndexedDB or Web Locks API on this page")
}

func (unavailableGuard) Complete(context.Context, string, string, runtime.ReplayRecord) {}

// laterComplete records a request's outcome in the store without holding
// up its answer: Consume, before anything runs, is what must be durable;
// an outcome lost to a reload right after the answer leaves the id
// consumed with completed: false, which tells the truth (it may have run).
type laterComplete struct{ *replaystore.Guard }

func (g laterComplete) Complete(ctx context.Context, session, id string, outcome runtime.ReplayRecord) {
	go g.Guard.Complete(ctx, session, id, outcome)
}
