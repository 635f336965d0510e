// Package replaystore is the page's replay guard (PLING.md §3.3 step 8):
// consumed ids are kept in storage that every tab of the origin shares and
// that survives a reload (IndexedDB), read and written only under a lock
// that every tab of the origin honours (the Web Locks API). An id consumed
// before a reload, or in another tab, is still consumed, and the record of
// how it ended survives with it. The bridge (wasm/replay.go) supplies the
// storage and the lock; the rules are here, in plain Go, tested natively.
//
// The layout, string keys to string values:
//
//	pling.replay            the index: "v1 <nextSweepMs>", then one line
//	                        "<session> <ids held> <earliest expiry>" a session
//	pling.replay.<session>  the session's ids, one line each:
//	                        "<id digest> <expiry> <flags>[ <code>]"
//
// The id digest is 16 base64url characters of the id's SHA-256 (96 bits),
// so every entry has the same small size whatever the id, and no request
// id is stored; flags are 1 completed, 2 ok. Anything else in these keys
// is an error: the guard then refuses (REPLAY_GUARD_UNAVAILABLE) rather
// than start over and forget consumed ids.
package replaystore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pling-go/pling/runtime"
)

// Tx reads and writes the storage while the lock is held.
type Tx interface {
	// Get returns the values of keys, with false where a key has none.
	Get(keys ...string) ([]string, []bool, error)
	// Write applies changes, all or none; it fails when storage is full.
	Write(changes []Change) error
}

// Change is one key written by Tx.Write: set to Value, or removed.
type Change struct {
	Key, Value string
	Remove     bool
}

// Store runs fn while holding the exclusive lock that every tab of the
// origin takes before it reads or writes the guard's keys.
type Store interface {
	Locked(ctx context.Context, fn func(Tx) error) error
}

const (
	// DefaultCapacity bounds the ids held for the whole origin: at about 30
	// characters an id, 20,000 are some 600,000 characters, a small part
	// of what a browser gives an origin.
	DefaultCapacity = 20_000
	// DefaultSessionCapacity bounds the ids of one session, a tenth of the
	// whole as in the built-in memory guard, so one session that fills its
	// share is refused alone.
	DefaultSessionCapacity = 2_000
	// sweepEveryMs is how often expired ids of every session are dropped.
	sweepEveryMs = 60_000

	indexKey  = "pling.replay"
	bucketPfx = "pling.replay."
)

var (
	// ErrFull: the origin holds DefaultCapacity unexpired ids.
	ErrFull = errors.New("pling: the page's replay store is full")
	// ErrSessionFull: the session holds its share.
	ErrSessionFull = errors.New("pling: this session's share of the page's replay store is full")
	errCorrupt     = errors.New("pling: the page's replay store is unreadable")
)

// Guard is a runtime.ReplayGuard over a Store.
type Guard struct {
	store                Store
	capacity, perSession int
}

// New returns a guard over store holding at most capacity ids, perSession
// of one session (not positive, or over capacity: capacity).
func New(store Store, capacity, perSession int) *Guard {
	if perSession <= 0 || perSession > capacity {
		perSession = capacity
	}
	return &Guard{store: store, capacity: capacity, perSession: perSession}
}

var _ runtime.ReplayGuard = (*Guard)(nil)

// Consume implements runtime.ReplayGuard: under the lock, a held id gives
// its record; else the id is written, with the index, in one write that
// is done (committed) before the request runs. Every tab reads and writes
// once per call, sweeps aside.
func (g *Guard) Consume(ctx context.Context, session, id string, expiresAtMs, nowMs int64) (prev *runtime.ReplayRecord, err error) {
	if !validSession(session) {
		return nil, fmt.Errorf("pling: session key %q cannot name a store key", session)
	}
	h := digest(id)
	err = g.store.Locked(ctx, func(tx Tx) error {
		vals, oks, err := tx.Get(bucketPfx+session, indexKey)
		if err != nil {
			return err
		}
		b, err := parseBucket(vals[0], oks[0])
		if err != nil {
			return err
		}
		if e, ok := b[h]; ok {
			if nowMs < e.exp {
				rec := e.record()
				prev = &rec
				return nil
			}
			delete(b, h) // expired: its session can no longer send it
		}
		idx, err := parseIndex(vals[1], oks[1])
		if err != nil {
			return err
		}
		// Sweeps run only when an id can have expired, so a full store
		// or share refuses without writing anything.
		idx.sessions[session] = stat(b)
		var changes []Change
		swept := false
		if nowMs >= idx.nextSweep || (idx.total() >= g.capacity && nowMs >= idx.minExp()) {
			if changes, err = sweepOthers(tx, idx, session, nowMs); err != nil {
				return err
			}
			idx.nextSweep = nowMs + sweepEveryMs
			sweep(b, nowMs)
			swept = true
		} else if len(b) >= g.perSession && nowMs >= idx.sessions[session].minExp {
			sweep(b, nowMs)
			swept = true
		}
		idx.sessions[session] = stat(b)
		var refuse error
		switch {
		case idx.total() >= g.capacity:
			refuse = ErrFull
		case len(b) >= g.perSession:
			refuse = ErrSessionFull
		}
		if refuse != nil {
			if swept {
				if err := tx.Write(append(changes, idx.change(), bucketChange(session, b))); err != nil {
					return err
				}
			}
			return refuse
		}
		b[h] = entry{exp: expiresAtMs}
		idx.sessions[session] = stat(b)
		return tx.Write(append(changes, idx.change(), bucketChange(session, b)))
	})
	if err != nil {
		return nil, err
	}
	return prev, nil
}

// Complete implements runtime.ReplayGuard. A failure leaves the id
// consumed and not completed: the REPLAY_DETECTED details then say
// completed: false, which claims nothing.
func (g *Guard) Complete(ctx context.Context, session, id string, outcome runtime.ReplayRecord) {
	if !validSession(session) {
		return
	}
	h := digest(id)
	_ = g.store.Locked(ctx, func(tx Tx) error {
		vals, oks, err := tx.Get(bucketPfx + session)
		if err != nil {
			return err
		}
		b, err := parseBucket(vals[0], oks[0])
		if err != nil {
			return err
		}
		e, ok := b[h]
		if !ok {
			return nil
		}
		e.flags = flagCompleted
		if outcome.OK {
			e.flags |= flagOK
		}
		e.code = outcome.Code
		if !validCode(e.code) {
			e.code = ""
		}
		b[h] = e
		return tx.Write([]Change{bucketChange(session, b)})
	})
}

const (
	flagCompleted = 1
	flagOK        = 2
)

type entry struct {
	exp   int64
	flags int
	code  string
}

func (e entry) record() runtime.ReplayRecord {
	return runtime.ReplayRecord{Completed: e.flags&flagCompleted != 0, OK: e.flags&flagOK != 0, Code: e.code}
}

// digest is the id's key in its session's bucket.
func digest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// sessionStat is a session's line in the index.
type sessionStat struct {
	n      int
	minExp int64
}

func stat(b map[string]entry) sessionStat {
	s := sessionStat{n: len(b), minExp: math.MaxInt64}
	for _, e := range b {
		s.minExp = min(s.minExp, e.exp)
	}
	return s
}

type index struct {
	nextSweep int64
	sessions  map[string]sessionStat
}

func (x *index) total() int {
	n := 0
	for _, s := range x.sessions {
		n += s.n
	}
	return n
}

func (x *index) minExp() int64 {
	m := int64(math.MaxInt64)
	for _, s := range x.sessions {
		m = min(m, s.minExp)
	}
	return m
}

// sweepOthers drops the expired ids of every session that can have some,
// but current's (the caller holds that bucket and sweeps it itself), and
// gives the changes to write.
func sweepOthers(tx Tx, idx *index, current string, nowMs int64) ([]Change, error) {
	var sessions, keys []string
	for s, st := range idx.sessions {
		if s != current && nowMs >= st.minExp {
			sessions, keys = append(sessions, s), append(keys, bucketPfx+s)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	sort.Strings(sessions)
	sort.Strings(keys)
	vals, oks, err := tx.Get(keys...)
	if err != nil {
		return nil, err
	}
	changes := make([]Change, 0, len(keys))
	for i, s := range sessions {
		b, err := parseBucket(vals[i], oks[i])
		if err != nil {
			return nil, err
		}
		sweep(b, nowMs)
		changes = append(changes, bucketChange(s, b))
		if len(b) == 0 {
			delete(idx.sessions, s)
			continue
		}
		idx.sessions[s] = stat(b)
	}
	return changes, nil
}

// bucketChange writes a session's ids, or removes its key when it has
// none.
func bucketChange(session string, b map[string]entry) Change {
	if len(b) == 0 {
		return Change{Key: bucketPfx + session, Remove: true}
	}
	return Change{Key: bucketPfx + session, Value: encodeBucket(b)}
}

func sweep(b map[string]entry, nowMs int64) {
	for h, e := range b {
		if nowMs >= e.exp {
			delete(b, h)
		}
	}
}

func parseIndex(text string, ok bool) (*index, error) {
	x := &index{sessions: map[string]sessionStat{}}
	if !ok {
		return x, nil
	}
	lines := strings.Split(text, "\n")
	head := strings.Split(lines[0], " ")
	if len(head) != 2 || head[0] != "v1" {
		return nil, errCorrupt
	}
	var err error
	if x.nextSweep, err = strconv.ParseInt(head[1], 10, 64); err != nil {
		return nil, errCorrupt
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, " ")
		if len(f) != 3 || !validSession(f[0]) {
			return nil, errCorrupt
		}
		n, err1 := strconv.Atoi(f[1])
		m, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || n < 0 {
			return nil, errCorrupt
		}
		if _, dup := x.sessions[f[0]]; dup {
			return nil, errCorrupt
		}
		x.sessions[f[0]] = sessionStat{n: n, minExp: m}
	}
	return x, nil
}

func (x *index) change() Change { return Change{Key: indexKey, Value: x.encode()} }

func (x *index) encode() string {
	keys := make([]string, 0, len(x.sessions))
	for s, st := range x.sessions {
		if st.n > 0 {
			keys = append(keys, s)
		}
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteString("v1 ")
	sb.WriteString(strconv.FormatInt(x.nextSweep, 10))
	for _, s := range keys {
		st := x.sessions[s]
		fmt.Fprintf(&sb, "\n%s %d %d", s, st.n, st.minExp)
	}
	return sb.String()
}

func parseBucket(text string, ok bool) (map[string]entry, error) {
	b := map[string]entry{}
	if !ok || text == "" {
		return b, nil
	}
	for _, l := range strings.Split(text, "\n") {
		f := strings.Split(l, " ")
		if len(f) < 3 || len(f) > 4 || !validDigest(f[0]) {
			return nil, errCorrupt
		}
		var e entry
		var err error
		if e.exp, err = strconv.ParseInt(f[1], 10, 64); err != nil {
			return nil, errCorrupt
		}
		if e.flags, err = strconv.Atoi(f[2]); err != nil || e.flags < 0 || e.flags > flagCompleted|flagOK {
			return nil, errCorrupt
		}
		if len(f) == 4 {
			if e.code = f[3]; e.code == "" || !validCode(e.code) {
				return nil, errCorrupt
			}
		}
		if _, dup := b[f[0]]; dup {
			return nil, errCorrupt
		}
		b[f[0]] = e
	}
	return b, nil
}

func encodeBucket(b map[string]entry) string {
	keys := make([]string, 0, len(b))
	for h := range b {
		keys = append(keys, h)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for i, h := range keys {
		e := b[h]
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(h)
		sb.WriteByte(' ')
		sb.WriteString(strconv.FormatInt(e.exp, 10))
		sb.WriteByte(' ')
		sb.WriteString(strconv.Itoa(e.flags))
		if e.code != "" {
			sb.WriteByte(' ')
			sb.WriteString(e.code)
		}
	}
	return sb.String()
}

// validSession accepts the runtime's session keys ("anonymous", "s:<hex>")
// and anything else made of [A-Za-z0-9:_-], up to 128 characters.
func validSession(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func validDigest(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validCode accepts error codes ([A-Z0-9_], up to 64 characters).
func validCode(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
