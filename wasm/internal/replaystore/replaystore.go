// Package replaystore is the page's replay guard (docs/protocol.md §3.3 step 8):
// consumed ids are kept in storage that every tab of the origin shares and
// that survives a reload (IndexedDB), each call one read-write transaction,
// which the storage runs one at a time across the origin's tabs. An id
// consumed before a reload, or in another tab, is still consumed, and the
// record of how it ended survives with it. The bridge (wasm/replay.go)
// supplies the storage; the rules are here, in plain Go, tested natively.
//
// The layout, string keys to string values, one record per id:
//
//	n                               the ids held by the origin: "<count>"
//	s.<session>                     the ids held by a session: "<count>"
//	i.<session>.<digest>            an id: "<expiry> <flags>[ <code>]"
//	x.<expiry>.<session>.<digest>   the same id in expiry order: ""
//
// The digest is 16 base64url characters of the id's SHA-256 (96 bits),
// so every record has the same small size whatever the id, and no request
// id is stored; the expiry in x keys is 16 zero-padded digits, so that
// the keys sort by it; flags are 1 completed, 2 ok. A call reads a fixed
// handful of keys and the range of x keys that have expired (usually
// none), whatever the store holds. Anything in these keys that the guard
// did not write is an error: the guard then refuses
// (REPLAY_GUARD_UNAVAILABLE) rather than start over and forget consumed
// ids.
package replaystore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pling-go/pling/internal/idchars"
	"github.com/pling-go/pling/runtime"
)

// Read is what a transaction reads in one round: the values of Keys and,
// when To is not empty, the keys from From to To (both included), in
// ascending order.
type Read struct {
	Keys     []string
	From, To string
}

// Got is what a Read read: Values[i] of Keys[i], with Found[i] false
// where the key has none, and the keys of the range.
type Got struct {
	Values []string
	Found  []bool
	Range  []string
}

// Change is one key written by a transaction: set to Value, or removed.
type Change struct {
	Key, Value string
	Remove     bool
}

// Store runs read-write transactions over the guard's keys, each one
// atomic and isolated from every other transaction of the origin (every
// tab's): Update reads first, calls step with what it read, reads again
// while step asks for more (next), and then applies step's changes, all
// or none, returning once they are committed. step runs inside the
// transaction, so it must not block; an error from step aborts the
// transaction (nothing is written) and is returned, as is any failure of
// the storage.
type Store interface {
	Update(ctx context.Context, first Read, step func(Got) (next *Read, changes []Change, err error)) error
}

const (
	// DefaultCapacity bounds the ids held for the whole origin: at about 90
	// characters an id (two keys and a record), 20,000 are some 1.8 million
	// characters, a small part of what a browser gives an origin.
	DefaultCapacity = 20_000
	// DefaultSessionCapacity bounds the ids of one session, a tenth of the
	// whole as in the built-in memory guard, so one session that fills its
	// share is refused alone.
	DefaultSessionCapacity = 2_000

	totalKey  = "n"
	countPfx  = "s."
	idPfx     = "i."
	expiryPfx = "x."
	// expiryDigits pads the expiry in x keys (ms since the epoch need 13).
	expiryDigits = 16
	maxExpiry    = 9_999_999_999_999_999
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

	mu      sync.Mutex
	pending map[string]completion // outcomes not yet written, by id key
	flusher *time.Timer           // set while pending is not empty
}

// completion is an outcome waiting to be written: the id's record gets
// these flags and code, if the store still holds it.
type completion struct {
	flags int
	code  string
}

// New returns a guard over store holding at most capacity ids, perSession
// of one session (not positive, or over capacity: capacity).
func New(store Store, capacity, perSession int) *Guard {
	if perSession <= 0 || perSession > capacity {
		perSession = capacity
	}
	return &Guard{store: store, capacity: capacity, perSession: perSession, pending: map[string]completion{}}
}

var _ runtime.ReplayGuard = (*Guard)(nil)

const (
	// FlushDelay is how long an outcome waits for the next consume to
	// carry it before it is written on its own.
	FlushDelay = 100 * time.Millisecond
	// maxCarried bounds the outcomes one consume carries.
	maxCarried = 32
)

// Consume implements runtime.ReplayGuard, in one transaction: it drops
// every id that has expired (the range of x keys up to now), writes the
// outcomes waiting to be written, and then a held id gives its record and
// a new one is written with the counts, committed before the request
// runs. A full share or store refuses, keeping the rest.
func (g *Guard) Consume(ctx context.Context, session, id string, expiresAtMs, nowMs int64) (*runtime.ReplayRecord, error) {
	if !validSession(session) {
		return nil, fmt.Errorf("pling: session key %q cannot name a store key", session)
	}
	c := &consumeTx{g: g, session: session, digest: digest(id), exp: min(max(expiresAtMs, 0), maxExpiry), now: nowMs}
	c.carried, c.outcomes = g.take(maxCarried)
	first := Read{
		Keys: append([]string{c.idKey(), countPfx + session, totalKey}, c.carried...),
		From: expiryPfx, To: expiryPfx + padExpiry(max(nowMs, 0)) + "/", // '/' sorts after '.'
	}
	if nowMs < 0 {
		first.To = "" // nothing can have expired
	}
	if err := g.store.Update(ctx, first, c.step); err != nil {
		return nil, err // the carried outcomes are lost: completed: false
	}
	return c.prev, c.refuse
}

// Complete implements runtime.ReplayGuard without waiting for the store:
// the outcome is carried by the next Consume's transaction, or written
// on its own after FlushDelay (Flush). Consume, before anything runs, is
// what must be durable; an outcome lost to a reload before it is written,
// or to a store failure, leaves the id consumed and not completed: the
// REPLAY_DETECTED details then say completed: false, which claims nothing
// (it may have run).
func (g *Guard) Complete(_ context.Context, session, id string, outcome runtime.ReplayRecord) {
	if !validSession(session) {
		return
	}
	o := completion{flags: flagCompleted}
	if outcome.OK {
		o.flags |= flagOK
	}
	if validCode(outcome.Code) {
		o.code = outcome.Code
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending[idPfx+session+"."+digest(id)] = o
	if g.flusher == nil {
		g.flusher = time.AfterFunc(FlushDelay, func() { g.Flush(context.Background()) })
	}
}

// Flush writes the outcomes waiting to be written, in one transaction
// each maxCarried.
func (g *Guard) Flush(ctx context.Context) {
	for {
		keys, outcomes := g.take(maxCarried)
		if len(keys) == 0 {
			return
		}
		_ = g.store.Update(ctx, Read{Keys: keys}, func(got Got) (*Read, []Change, error) {
			if len(got.Values) != len(keys) || len(got.Found) != len(keys) {
				return nil, nil, errCorrupt
			}
			var changes []Change
			for i, k := range keys {
				if !got.Found[i] {
					continue // swept already
				}
				e, err := parseEntry(got.Values[i])
				if err != nil {
					return nil, nil, err
				}
				e.flags, e.code = outcomes[i].flags, outcomes[i].code
				changes = append(changes, Change{Key: k, Value: e.encode()})
			}
			return nil, changes, nil
		})
	}
}

// take removes up to n waiting outcomes, in key order, and stops the
// flush timer once none are left.
func (g *Guard) take(n int) ([]string, []completion) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(g.pending))
	for k := range g.pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	keys = keys[:min(n, len(keys))]
	outcomes := make([]completion, len(keys))
	for i, k := range keys {
		outcomes[i] = g.pending[k]
		delete(g.pending, k)
	}
	if len(g.pending) == 0 && g.flusher != nil {
		g.flusher.Stop()
		g.flusher = nil
	}
	return keys, outcomes
}

// consumeTx is one Consume's transaction: what it read, then what it
// decided.
type consumeTx struct {
	g        *Guard
	session  string
	digest   string
	exp, now int64
	round    int
	held     *entry
	counts   map[string]int // the sessions' counts as read, then as written
	total    int
	expired  []expiryKey
	others   []string // the sessions whose counts the second round reads
	carried  []string // the id keys of the outcomes it writes
	outcomes []completion
	found    []*entry // the carried ids' records, where held
	prev     *runtime.ReplayRecord
	refuse   error
}

func (c *consumeTx) idKey() string { return idPfx + c.session + "." + c.digest }

func (c *consumeTx) step(got Got) (*Read, []Change, error) {
	c.round++
	switch c.round {
	case 1:
		if len(got.Values) != 3+len(c.carried) || len(got.Found) != 3+len(c.carried) {
			return nil, nil, errCorrupt
		}
		if got.Found[0] {
			e, err := parseEntry(got.Values[0])
			if err != nil {
				return nil, nil, err
			}
			c.held = &e
		}
		c.found = make([]*entry, len(c.carried))
		for i, k := range c.carried {
			if !got.Found[3+i] {
				continue // swept already
			}
			e, err := parseEntry(got.Values[3+i])
			if err != nil {
				return nil, nil, err
			}
			e.flags, e.code = c.outcomes[i].flags, c.outcomes[i].code
			c.found[i] = &e
			if k == c.idKey() {
				c.held = &e // its outcome, known here first
			}
		}
		c.counts = map[string]int{}
		var err error
		if c.counts[c.session], err = parseCount(got.Values[1], got.Found[1]); err != nil {
			return nil, nil, err
		}
		if c.total, err = parseCount(got.Values[2], got.Found[2]); err != nil {
			return nil, nil, err
		}
		for _, k := range got.Range {
			x, ok := parseExpiryKey(k)
			if !ok || x.exp > c.now {
				return nil, nil, errCorrupt
			}
			c.expired = append(c.expired, x)
			if _, ok := c.counts[x.session]; !ok {
				c.counts[x.session] = 0
				c.others = append(c.others, x.session)
			}
		}
		if len(c.others) > 0 {
			keys := make([]string, len(c.others))
			for i, s := range c.others {
				keys[i] = countPfx + s
			}
			return &Read{Keys: keys}, nil, nil
		}
	case 2:
		if len(got.Values) != len(c.others) || len(got.Found) != len(c.others) {
			return nil, nil, errCorrupt
		}
		for i, s := range c.others {
			n, err := parseCount(got.Values[i], got.Found[i])
			if err != nil {
				return nil, nil, err
			}
			c.counts[s] = n
		}
	default:
		return nil, nil, errCorrupt
	}
	changes, err := c.decide()
	return nil, changes, err
}

// decide is Consume's rule, once everything is read: the sweep's changes,
// then the id's.
func (c *consumeTx) decide() ([]Change, error) {
	touched := map[string]bool{}
	swept := map[string]bool{}
	var changes []Change
	for _, x := range c.expired {
		if c.counts[x.session] <= 0 || c.total <= 0 {
			return nil, errCorrupt // an id its counts do not hold
		}
		c.counts[x.session]--
		c.total--
		touched[x.session] = true
		changes = append(changes,
			Change{Key: x.key, Remove: true},
			Change{Key: idPfx + x.session + "." + x.digest, Remove: true})
		swept[idPfx+x.session+"."+x.digest] = true
		if x.session == c.session && x.digest == c.digest {
			c.held = nil // expired: its session can no longer send it
		}
	}
	for i, e := range c.found {
		if e != nil && !swept[c.carried[i]] {
			changes = append(changes, Change{Key: c.carried[i], Value: e.encode()})
		}
	}
	if c.held != nil && c.now >= c.held.exp {
		return nil, errCorrupt // expired, yet not in the expiry order
	}
	switch {
	case c.held != nil:
		rec := c.held.record()
		c.prev = &rec
	case c.total >= c.g.capacity:
		c.refuse = ErrFull
	case c.counts[c.session] >= c.g.perSession:
		c.refuse = ErrSessionFull
	default:
		e := entry{exp: c.exp}
		changes = append(changes,
			Change{Key: c.idKey(), Value: e.encode()},
			Change{Key: expiryPfx + padExpiry(c.exp) + "." + c.session + "." + c.digest})
		c.counts[c.session]++
		c.total++
		touched[c.session] = true
	}
	if len(touched) == 0 {
		return changes, nil
	}
	sessions := make([]string, 0, len(touched))
	for s := range touched {
		sessions = append(sessions, s)
	}
	sort.Strings(sessions)
	for _, s := range sessions {
		changes = append(changes, countChange(countPfx+s, c.counts[s]))
	}
	return append(changes, countChange(totalKey, c.total)), nil
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

func (e entry) encode() string {
	s := strconv.FormatInt(e.exp, 10) + " " + strconv.Itoa(e.flags)
	if e.code != "" {
		s += " " + e.code
	}
	return s
}

func parseEntry(text string) (entry, error) {
	f := strings.Split(text, " ")
	if len(f) < 2 || len(f) > 3 {
		return entry{}, errCorrupt
	}
	var e entry
	var err error
	if e.exp, err = strconv.ParseInt(f[0], 10, 64); err != nil || e.exp < 0 || e.exp > maxExpiry {
		return entry{}, errCorrupt
	}
	if e.flags, err = strconv.Atoi(f[1]); err != nil || e.flags < 0 || e.flags > flagCompleted|flagOK {
		return entry{}, errCorrupt
	}
	if len(f) == 3 {
		if e.code = f[2]; e.code == "" || !validCode(e.code) {
			return entry{}, errCorrupt
		}
	}
	return e, nil
}

// countChange writes a count, or removes its key at zero.
func countChange(key string, n int) Change {
	if n == 0 {
		return Change{Key: key, Remove: true}
	}
	return Change{Key: key, Value: strconv.Itoa(n)}
}

func parseCount(text string, ok bool) (int, error) {
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n <= 0 || strconv.Itoa(n) != text {
		return 0, errCorrupt
	}
	return n, nil
}

// expiryKey is an x key, parsed.
type expiryKey struct {
	key, session, digest string
	exp                  int64
}

func padExpiry(ms int64) string {
	s := strconv.FormatInt(ms, 10)
	return strings.Repeat("0", max(expiryDigits-len(s), 0)) + s
}

func parseExpiryKey(k string) (expiryKey, bool) {
	f := strings.Split(k, ".")
	if len(f) != 4 || f[0]+"." != expiryPfx || len(f[1]) != expiryDigits || !validSession(f[2]) || !validDigest(f[3]) {
		return expiryKey{}, false
	}
	exp, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || exp < 0 {
		return expiryKey{}, false
	}
	return expiryKey{key: k, session: f[2], digest: f[3], exp: exp}, true
}

// digest is the id's key within its session.
func digest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// validSession accepts the runtime's session keys ("anonymous", "s:<hex>")
// and anything else made of [A-Za-z0-9:_-], up to 128 characters.
func validSession(s string) bool {
	return idchars.Of(s, 1, 128, ":_-")
}

func validDigest(s string) bool {
	return idchars.Of(s, 16, 16, "_-")
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
