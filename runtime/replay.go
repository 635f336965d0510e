package runtime

import (
	"context"
	"errors"
	"sync"
)

// ReplayGuard decides step 8 of the check order: it consumes (session, id)
// at most once. Consume is atomic: of concurrent calls with the same key,
// exactly one gets (nil, nil). A consumed id is kept until expiresAtMs (the
// session's expiry). Complete records how the request ended, for the
// REPLAY_DETECTED details. An error means the guard failed; the gate then
// refuses the request with REPLAY_GUARD_UNAVAILABLE (fail closed).
type ReplayGuard interface {
	Consume(ctx context.Context, sessionKey, id string, expiresAtMs, nowMs int64) (*ReplayRecord, error)
	Complete(ctx context.Context, sessionKey, id string, outcome ReplayRecord)
}

// ReplayRecord is what the guard remembers of a consumed id: whether the
// request completed, and how (the code only, never the result).
type ReplayRecord struct {
	Completed bool
	OK        bool
	Code      string
}

// DefaultReplayCapacity is the built-in guard's bound on remembered ids.
const DefaultReplayCapacity = 100_000

// ErrReplayGuardFull is returned when the guard holds Capacity unexpired
// ids: it refuses new ones rather than forget a consumed one.
var ErrReplayGuardFull = errors.New("pling: replay guard is full")

// MemoryReplayGuard is the built-in ReplayGuard. Memory is bounded: each id
// is dropped when its session expires, and when capacity unexpired ids are
// held, new ids are refused (fail closed) instead of forgetting old ones,
// which would reopen them for replay.
type MemoryReplayGuard struct {
	capacity int
	mu       sync.Mutex
	m        map[replayKey]replayEntry
	nextGC   int64
}

type replayKey struct{ session, id string }

type replayEntry struct {
	rec       ReplayRecord
	expiresMs int64
}

// NewMemoryReplayGuard returns a guard that remembers at most capacity ids.
func NewMemoryReplayGuard(capacity int) *MemoryReplayGuard {
	return &MemoryReplayGuard{capacity: capacity, m: map[replayKey]replayEntry{}}
}

// Consume implements ReplayGuard.
func (g *MemoryReplayGuard) Consume(_ context.Context, session, id string, expiresAtMs, nowMs int64) (*ReplayRecord, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := replayKey{session, id}
	if e, ok := g.m[k]; ok && nowMs < e.expiresMs {
		rec := e.rec
		return &rec, nil
	}
	if len(g.m) >= g.capacity || nowMs >= g.nextGC {
		g.gc(nowMs)
	}
	if len(g.m) >= g.capacity {
		return nil, ErrReplayGuardFull
	}
	g.m[k] = replayEntry{expiresMs: expiresAtMs}
	return nil, nil
}

// Complete implements ReplayGuard.
func (g *MemoryReplayGuard) Complete(_ context.Context, session, id string, outcome ReplayRecord) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := replayKey{session, id}
	if e, ok := g.m[k]; ok {
		outcome.Completed = true
		e.rec = outcome
		g.m[k] = e
	}
}

// Len returns the number of ids held.
func (g *MemoryReplayGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.m)
}

func (g *MemoryReplayGuard) gc(nowMs int64) {
	for k, e := range g.m {
		if nowMs >= e.expiresMs {
			delete(g.m, k)
		}
	}
	g.nextGC = nowMs + 60_000
}
