//go:build js && wasm

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/wasm/internal/replaystore"
)

// The page's replay guard: consumed ids in IndexedDB, so that they
// survive a reload and hold across the origin's tabs (replaystore), one
// read-write transaction per call. RATIONALE.md, "Why does the page keep
// consumed ids in IndexedDB?".

const (
	// replayDB and replayObjects are the database and its one object store
	// (string keys to string values). Version 2 is the one-record-per-id
	// layout; the upgrade drops version 1's store.
	replayDB        = "pling.replay"
	replayDBVersion = 2
	replayObjects   = "ids"
	// replayStoreWait bounds each open and each transaction, including
	// its wait behind the other tabs' transactions: a store that does not
	// answer refuses the request (REPLAY_GUARD_UNAVAILABLE) instead of
	// hanging.
	replayStoreWait = 5 * time.Second
)

// pageReplayGuard chooses the page runtime's shared replay guard (the
// one write and destructive invokes consume their ids in, beside the
// built-in memory guard every request goes through) from the
// configuration's replayGuard: "" (where IndexedDB exists, the store; in
// another browser page, a guard that refuses those invokes; elsewhere,
// Node or a Go host, nil: none) or "memory" (none: ids live as long as
// the module).
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
		_, _ = console.Call("warn", `pling: this page has no IndexedDB (a sandboxed frame, or storage disabled), `+
			`so request ids cannot be kept across reloads and tabs; every invoke of a write or destructive action is refused with REPLAY_GUARD_UNAVAILABLE. `+
			`Configure replayGuard: "memory" to keep ids for one page load only.`)
	}
	return unavailableGuard{}, nil
}

// webReplayStore finds indexedDB and IDBKeyRange (a sandboxed frame
// throws on access).
func webReplayStore() (*webStore, bool) {
	idb, err := global.Get("indexedDB")
	if err != nil || idb.Type() != safejs.TypeObject {
		return nil, false
	}
	kr, err := global.Get("IDBKeyRange")
	if err != nil || kr.Type() != safejs.TypeFunction {
		return nil, false
	}
	return &webStore{idb: idb, keyRange: kr, db: safejs.Undefined()}, true
}

// webStore is replaystore.Store over IndexedDB. localStorage would be
// simpler, but Chromium keeps a copy of it in each renderer and tells the
// others of a write later: a tab can read the value from before another
// tab's write (the Chromium test of two tabs at once ran the id twice).
// IndexedDB is read from the browser's one copy, and runs read-write
// transactions over the same object store one at a time, whichever tab
// opened them: that is the exclusion between tabs.
type webStore struct {
	idb, keyRange safejs.Value
	mu            sync.Mutex
	db            safejs.Value // the open database, or undefined
}

// Update implements replaystore.Store: one read-write transaction. Its
// requests are issued here, and then from inside the success callback of
// each round's last request, where step runs (on the JS stack, so the
// transaction is still active; step does not block); this goroutine only
// waits for the transaction to complete, abort or time out.
func (w *webStore) Update(_ context.Context, first replaystore.Read, step func(replaystore.Got) (*replaystore.Read, []replaystore.Change, error)) error {
	db, err := w.open()
	if err != nil {
		return err
	}
	if err = w.update(db, first, step); err != nil {
		// The database may have been closed under us (storage cleared, a
		// newer version opened): open another next time.
		w.reset(db)
	}
	return err
}

var errStoreFailed = errors.New("pling: the replay store failed")

func (w *webStore) update(db safejs.Value, first replaystore.Read, step func(replaystore.Got) (*replaystore.Read, []replaystore.Change, error)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errStoreFailed
		}
	}()
	opts, err := newObject(map[string]any{"durability": "relaxed"})
	if err != nil {
		return err
	}
	tx, err := db.Call("transaction", replayObjects, "readwrite", opts)
	if err != nil {
		return err
	}
	objects, err := tx.Call("objectStore", replayObjects)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	finish := func(err error) {
		select {
		case done <- err:
		default:
		}
	}
	var (
		gets []safejs.Value // this round's get requests, then its range request
		rng  safejs.Value
		last safejs.Value // the request whose success runs step
	)
	// issue sends a round's requests; the last one's success runs step.
	var onLast safejs.Func
	issue := func(r replaystore.Read) error {
		gets, rng = gets[:0], safejs.Undefined()
		for _, k := range r.Keys {
			req, err := objects.Call("get", k)
			if err != nil {
				return err
			}
			gets, last = append(gets, req), req
		}
		if r.To != "" {
			kr, err := w.keyRange.Call("bound", r.From, r.To)
			if err != nil {
				return err
			}
			if rng, err = objects.Call("getAllKeys", kr); err != nil {
				return err
			}
			last = rng
		}
		if last.Type() != safejs.TypeObject {
			return errStoreFailed
		}
		return last.Set("onsuccess", onLast.Value())
	}
	// apply writes the changes; the transaction commits once they are done.
	apply := func(changes []replaystore.Change) error {
		for _, c := range changes {
			var err error
			if c.Remove {
				_, err = objects.Call("delete", c.Key)
			} else {
				_, err = objects.Call("put", c.Value, c.Key)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	onLast, err = safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = errStoreFailed
				}
			}()
			got, err := results(gets, rng)
			if err != nil {
				return err
			}
			next, changes, err := step(got)
			if err != nil {
				return err
			}
			if next != nil {
				return issue(*next)
			}
			return apply(changes)
		}()
		if err != nil {
			finish(err)
			_, _ = tx.Call("abort")
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer onLast.Release()
	var hooked []safejs.Func
	defer func() {
		// Unhooked before release: an abort after a timeout, or an error
		// event followed by abort, must not call a released function.
		for _, ev := range []string{"oncomplete", "onerror", "onabort"} {
			_ = tx.Set(ev, safejs.Null())
		}
		if last.Type() == safejs.TypeObject {
			_ = last.Set("onsuccess", safejs.Null())
		}
		for _, f := range hooked {
			f.Release()
		}
	}()
	for _, ev := range []struct {
		name string
		err  error
	}{{"oncomplete", nil}, {"onerror", errStoreFailed}, {"onabort", errStoreFailed}} {
		f, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
			finish(ev.err)
			return nil
		})
		if err != nil {
			_, _ = tx.Call("abort")
			return err
		}
		hooked = append(hooked, f)
		if err := tx.Set(ev.name, f.Value()); err != nil {
			_, _ = tx.Call("abort")
			return err
		}
	}
	if err := issue(first); err != nil {
		_, _ = tx.Call("abort")
		return err
	}
	timer := time.NewTimer(replayStoreWait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		// Aborted if it has not begun to commit; if it has, the id may be
		// consumed, and the request is refused all the same (completed:
		// false on a resend, which is true: it never ran).
		_, _ = tx.Call("abort")
		return errors.New("pling: the replay store did not answer")
	}
}

// results reads a round's answers: the gets' values (strings, or
// undefined for none) and the range's keys.
func results(gets []safejs.Value, rng safejs.Value) (replaystore.Got, error) {
	got := replaystore.Got{Values: make([]string, len(gets)), Found: make([]bool, len(gets))}
	for i, req := range gets {
		v, err := req.Get("result")
		if err != nil {
			return got, err
		}
		switch v.Type() {
		case safejs.TypeUndefined:
		case safejs.TypeString:
			if got.Values[i], err = v.String(); err != nil {
				return got, err
			}
			got.Found[i] = true
		default:
			return got, errors.New("pling: the replay store holds a value it did not write")
		}
	}
	if rng.Type() != safejs.TypeObject {
		return got, nil
	}
	keys, n, err := lengthOf(rng, "result")
	if err != nil {
		return got, err
	}
	got.Range = make([]string, n)
	for i := range n {
		k, err := keys.Index(i)
		if err != nil {
			return got, err
		}
		if k.Type() != safejs.TypeString {
			return got, errors.New("pling: the replay store holds a key it did not write")
		}
		if got.Range[i], err = k.String(); err != nil {
			return got, err
		}
	}
	return got, nil
}

// open returns the open database, opening it once (creating its object
// store, and dropping version 1's). A connection gives way when another
// tab opens a newer version.
func (w *webStore) open() (safejs.Value, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.db.Type() == safejs.TypeObject {
		return w.db, nil
	}
	req, err := w.idb.Call("open", replayDB, replayDBVersion)
	if err != nil {
		return safejs.Undefined(), err
	}
	upgrade, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
		db, err := req.Get("result")
		if err != nil {
			return nil
		}
		if names, err := db.Get("objectStoreNames"); err == nil {
			if has, err := names.Call("contains", "kv"); err == nil {
				if b, err := has.Bool(); err == nil && b {
					_, _ = db.Call("deleteObjectStore", "kv")
				}
			}
		}
		_, _ = db.Call("createObjectStore", replayObjects)
		return nil
	})
	if err != nil {
		return safejs.Undefined(), err
	}
	defer upgrade.Release()
	if err := req.Set("onupgradeneeded", upgrade.Value()); err != nil {
		return safejs.Undefined(), err
	}
	werr := idbWait(req)
	_ = req.Set("onupgradeneeded", safejs.Null())
	if werr != nil {
		return safejs.Undefined(), werr
	}
	db, err := req.Get("result")
	if err != nil {
		return safejs.Undefined(), err
	}
	// A newer version opened in another tab waits for this connection to
	// close: close it, and refuse until this page reloads with the new
	// code (transaction then throws, so the next call reopens, and an
	// older page's open of a newer database fails: closed either way).
	if close, err := db.Get("close"); err == nil && close.Type() == safejs.TypeFunction {
		if bound, err := close.Call("bind", db); err == nil {
			_ = db.Set("onversionchange", bound)
		}
	}
	w.db = db
	return db, nil
}

// reset closes db, if it is still the open one, so that the next call
// opens another.
func (w *webStore) reset(db safejs.Value) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.db.Equal(db) {
		_, _ = db.Call("close")
		w.db = safejs.Undefined()
	}
}

// idbWait waits for an IndexedDB request (success or error) to finish;
// any way but success is an error.
func idbWait(target safejs.Value) error {
	done := make(chan error, 1)
	var fns []safejs.Func
	var events []string
	defer func() {
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
	if err := on("success", nil); err != nil {
		return err
	}
	if err := on("error", errStoreFailed); err != nil {
		return err
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
	return nil, errors.New("pling: no IndexedDB on this page")
}

func (unavailableGuard) Complete(context.Context, string, string, runtime.ReplayRecord) {}
