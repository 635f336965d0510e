package runtime

import (
	"sync"
)

// loopDetector counts executions of the same call (session, capability,
// canonical input) while the page's states stay the same (docs/protocol.md §4.2).
// Paging through changing state is not a loop: any change of the state
// fingerprint between two identical calls starts the count again.
type loopDetector struct {
	cfg      LoopConfig
	windowMs int64 // cfg.Window in the clock's milliseconds
	mu       sync.Mutex
	m        map[string]*loopEntry
}

type loopEntry struct {
	fingerprint string
	count       int
	lastMs      int64
}

// maxLoopEntries bounds the detector's memory; the oldest entries go first.
const maxLoopEntries = 4096

func newLoopDetector(cfg LoopConfig) *loopDetector {
	return &loopDetector{cfg: cfg, windowMs: durationMs(cfg.Window), m: map[string]*loopEntry{}}
}

// check reports whether the call is a loop: it ran Repeats times already,
// within the window, with the same state fingerprint at each start.
func (d *loopDetector) check(key, fingerprint string, nowMs int64) bool {
	if d.cfg.Repeats <= 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.m[key]
	if e == nil || e.fingerprint != fingerprint || d.expired(e, nowMs) {
		return false
	}
	return e.count >= d.cfg.Repeats
}

// ran records an execution of the call that started with fingerprint.
func (d *loopDetector) ran(key, fingerprint string, nowMs int64) {
	if d.cfg.Repeats <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.m[key]
	if e == nil {
		if len(d.m) >= maxLoopEntries {
			d.evict()
		}
		e = &loopEntry{}
		d.m[key] = e
	}
	if e.fingerprint != fingerprint || d.expired(e, nowMs) {
		e.fingerprint, e.count = fingerprint, 0
	}
	e.count++
	e.lastMs = nowMs
}

func (d *loopDetector) expired(e *loopEntry, nowMs int64) bool {
	return d.windowMs > 0 && nowMs-e.lastMs > d.windowMs
}

func (d *loopDetector) evict() {
	var oldest string
	var at int64
	first := true
	for k, e := range d.m {
		if first || e.lastMs < at || (e.lastMs == at && k < oldest) {
			oldest, at, first = k, e.lastMs, false
		}
	}
	delete(d.m, oldest)
}
