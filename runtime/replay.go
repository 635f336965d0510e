package runtime

import (
	"context"
	"errors"
	"math"
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

// DefaultReplaySessionCapacity is the built-in guard's bound on the ids one
// session holds: a tenth of the whole, so that a session that fills its
// share is refused alone (RATIONALE.md, "How is the replay guard's memory
// bounded?").
const DefaultReplaySessionCapacity = 10_000

// errReplayGuardFull is returned when the guard holds Capacity unexpired
// ids: it refuses new ones rather than forget a consumed one.
var errReplayGuardFull = errors.New("pling: replay guard is full")

// errReplaySessionFull is returned when one session holds its share of
// unexpired ids: that session's new ids are refused, other sessions'
// are not.
var errReplaySessionFull = errors.New("pling: this session's share of the replay guard is full")

// MemoryReplayGuard is the built-in ReplayGuard. Memory is bounded: each id
// is dropped when its session expires, and when capacity unexpired ids are
// held, or perSession by one session, new ids (of that session) are
// refused (fail closed) instead of forgetting old ones, which would reopen
// them for replay.
type MemoryReplayGuard struct {
	capacity, perSession int
	mu                   sync.Mutex
	sessions             map[string]*replaySession
	n                    int   // ids held, over every session
	minExp               int64 // no id held expires before this
	nextGC               int64
}

// replaySession is the ids one session holds.
type replaySession struct {
	ids    map[string]replayEntry
	minExp int64 // no id of the session expires before this
}

type replayEntry struct {
	rec       ReplayRecord
	expiresMs int64
}

// NewMemoryReplayGuard returns a guard that remembers at most capacity ids,
// and at most perSession ids of one session. A perSession that is not
// positive or exceeds capacity is capacity.
func NewMemoryReplayGuard(capacity, perSession int) *MemoryReplayGuard {
	if perSession <= 0 || perSession > capacity {
		perSession = capacity
	}
	return &MemoryReplayGuard{capacity: capacity, perSession: perSession,
		sessions: map[string]*replaySession{}, minExp: math.MaxInt64}
}

// Consume implements ReplayGuard.
func (g *MemoryReplayGuard) Consume(_ context.Context, session, id string, expiresAtMs, nowMs int64) (*ReplayRecord, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[session]; s != nil {
		if e, ok := s.ids[id]; ok {
			if nowMs < e.expiresMs {
				rec := e.rec
				return &rec, nil
			}
			delete(s.ids, id) // expired: its session can no longer send it
			g.n--
		}
	}
	// Sweeps run only when something can have expired, so a full guard
	// refuses in constant time.
	if nowMs >= g.nextGC || (g.n >= g.capacity && nowMs >= g.minExp) {
		g.gc(nowMs)
	}
	s := g.sessions[session]
	if s != nil && len(s.ids) >= g.perSession && nowMs >= s.minExp {
		g.sweep(s, nowMs)
	}
	if g.n >= g.capacity {
		return nil, errReplayGuardFull
	}
	if s != nil && len(s.ids) >= g.perSession {
		return nil, errReplaySessionFull
	}
	if s == nil {
		s = &replaySession{ids: map[string]replayEntry{}, minExp: math.MaxInt64}
		g.sessions[session] = s
	}
	s.ids[id] = replayEntry{expiresMs: expiresAtMs}
	g.n++
	s.minExp = min(s.minExp, expiresAtMs)
	g.minExp = min(g.minExp, expiresAtMs)
	return nil, nil
}

// Complete implements ReplayGuard.
func (g *MemoryReplayGuard) Complete(_ context.Context, session, id string, outcome ReplayRecord) {
	g.held(session, id, func(s *replaySession, e replayEntry) {
		outcome.Completed = true
		e.rec = outcome
		s.ids[id] = e
	})
}

// held runs f, under the lock, on the entry of id in session when the
// guard holds it.
func (g *MemoryReplayGuard) held(session, id string, f func(s *replaySession, e replayEntry)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[session]; s != nil {
		if e, ok := s.ids[id]; ok {
			f(s, e)
		}
	}
}

// Release forgets an id that Consume just took for a request that a later
// check (the shared guard of WithSharedReplayGuard) refused before
// anything ran, so that the request may be sent again with the same id.
func (g *MemoryReplayGuard) Release(_ context.Context, session, id string) {
	g.held(session, id, func(s *replaySession, _ replayEntry) {
		delete(s.ids, id)
		g.n--
	})
}

// replayReleaser is a ReplayGuard that can forget an id it just consumed
// (MemoryReplayGuard can; a custom guard may).
type replayReleaser interface {
	Release(ctx context.Context, sessionKey, id string)
}

// Len returns the number of ids held.
func (g *MemoryReplayGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// gc drops the expired ids of every session that can have some, and
// sessions left with none.
func (g *MemoryReplayGuard) gc(nowMs int64) {
	g.minExp = math.MaxInt64
	for k, s := range g.sessions {
		if nowMs >= s.minExp {
			g.sweep(s, nowMs)
		}
		if len(s.ids) == 0 {
			delete(g.sessions, k)
			continue
		}
		g.minExp = min(g.minExp, s.minExp)
	}
	g.nextGC = nowMs + 60_000
}

// sweep drops the expired ids of s.
func (g *MemoryReplayGuard) sweep(s *replaySession, nowMs int64) {
	s.minExp = math.MaxInt64
	for id, e := range s.ids {
		if nowMs >= e.expiresMs {
			delete(s.ids, id)
			g.n--
			continue
		}
		s.minExp = min(s.minExp, e.expiresMs)
	}
}
