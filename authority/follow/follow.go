// Package follow is the page side of the delegation authority
// (docs/authority.md "Pages that follow the authority"): a Follower keeps
// an authority's signing keys and its revocation feed, verifies the pl1
// tokens it issues (a runtime.SessionVerifier), and consumes the request
// ids of a delegated session's write and destructive invokes in the
// authority's shared replay guard (a runtime.ReplayGuard).
//
// It fails closed: while the feed is not known to be current (never
// fetched, or its last answer older than the freshness bound), delegated
// sessions are refused with SESSION_INVALID; a shared replay guard that
// cannot reach the authority refuses with REPLAY_GUARD_UNAVAILABLE.
//
// The package does not import net/http on js/wasm, where the page module
// passes a Transport over the browser's fetch (WithTransport).
package follow

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pling-go/pling/authority/internal/urlsafe"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/sessionkey"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// Transport sends one HTTP request to the authority and returns the
// status and the body (at most MaxBodyBytes of it). bearer, when not
// empty, goes in Authorization; body, when not nil, is JSON.
type Transport interface {
	Do(ctx context.Context, method, url, bearer string, body []byte) (status int, respBody []byte, err error)
}

// MaxBodyBytes bounds an answer of the authority the follower reads.
const MaxBodyBytes = 1 << 20

// Defaults of a Follower.
const (
	// DefaultWaitSeconds is the long-poll wait of the revocation feed.
	DefaultWaitSeconds = 20
	// DefaultFreshGraceMs is added to the wait for the freshness bound:
	// the feed is current while its last answer is at most wait + grace
	// old.
	DefaultFreshGraceMs = 10_000
	// KeyRefetchMs is the least time between two key fetches made for an
	// unknown kid, so a stream of forged kids cannot make the page hammer
	// the authority.
	KeyRefetchMs = 10_000
	// ReadyWaitMs bounds how long a request waits for the first sync
	// with the authority before it is refused.
	ReadyWaitMs = 5_000
	// MaxRevoked bounds the revoked set; beyond it the feed counts as not
	// current (fail closed), never as forgetting a revocation.
	MaxRevoked = 200_000
	// MaxSessions bounds the delegated sessions whose token the shared
	// replay guard remembers.
	MaxSessions = 4096
	// callTimeout bounds one call of the shared replay guard.
	callTimeout  = 5 * time.Second
	maxBackoffMs = 30_000
	// minPollGap is the least time between the starts of two polls of the
	// feed that both succeeded; catchUpGap replaces it after an answer
	// that held entries (reading the live revocations at a start, in
	// pages of thousands), so a start costs the pages' transfer, not a
	// quarter second each.
	minPollGap     = 250 * time.Millisecond
	catchUpGap     = 10 * time.Millisecond
	catchUpEntries = 100
)

// Option configures a Follower.
type Option func(*Follower)

// WithTransport sets how the follower reaches the authority (required on
// js/wasm; elsewhere the default is net/http).
func WithTransport(t Transport) Option { return func(f *Follower) { f.tr = t } }

// WithClock sets the clock of freshness, backoff and the bounds above; it
// should be the runtime's (runtime.WithClock).
func WithClock(c runtime.Clock) Option { return func(f *Follower) { f.clock = c } }

// WithWait sets the long-poll wait of the feed in seconds (1–30) and so
// the freshness bound (wait + DefaultFreshGraceMs).
func WithWait(seconds int) Option { return func(f *Follower) { f.waitSeconds = seconds } }

// Follower follows one authority for one page origin.
type Follower struct {
	base        string // the authority's URL, without a trailing '/'
	audience    string
	tr          Transport
	clock       runtime.Clock
	waitSeconds int
	freshMs     int64

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{} // closed at the first sync of keys and feed

	fetchMu sync.Mutex // one key fetch at a time

	mu         sync.Mutex
	keys       map[string]keyEntry
	tv         *runtime.TokenVerifier // over the keys live at tvUntilMs
	tvUntilMs  int64                  // the first notAfter among them
	keyFetchMs int64                  // the last key fetch made for an unknown kid, by the clock
	cursor     string
	epoch      string           // the authority's store's, from the feed ("" until the first answer)
	revoked    map[string]int64 // session id → its expiry (Unix ms; 0: not given)
	overflow   bool             // re-reading the feed from its start: the set passed MaxRevoked, or the store was restored
	restored   bool             // the re-read is for a restored store
	feedOKMs   int64            // the last answer of the feed, by the clock; 0: none
	synced     bool
	sessions   map[string]delegated // session key → the token it stands for

	serverGuard runtime.ApprovalGuard // the approvals CheckCall accepted (apart from a page Approver's)
}

type keyEntry struct {
	pub        ed25519.PublicKey
	notAfterMs int64 // 0: the signing key
}

// delegated is what the shared guard needs of a session the follower
// verified: the session id it is known by in the authority, and the token
// that authenticates it there.
type delegated struct {
	id, token string
	expMs     int64
}

// New starts a follower of the authority at base for the page origin
// audience. It fetches the keys and follows the feed until Close.
func New(base, audience string, opts ...Option) (*Follower, error) {
	if !validBase(base) {
		return nil, errors.New("pling: authority must be an http(s) URL without query or fragment")
	}
	if audience == "" {
		return nil, errors.New("pling: an authority needs the page origin")
	}
	f := &Follower{base: strings.TrimRight(base, "/"), audience: audience, clock: runtime.SystemClock{},
		waitSeconds: DefaultWaitSeconds, done: make(chan struct{}), ready: make(chan struct{}),
		keys: map[string]keyEntry{}, revoked: map[string]int64{}, sessions: map[string]delegated{}}
	for _, o := range opts {
		o(f)
	}
	if f.tr == nil {
		f.tr = defaultTransport()
	}
	if f.tr == nil {
		return nil, errors.New("pling: this host needs follow.WithTransport")
	}
	f.waitSeconds = min(max(f.waitSeconds, 1), 30)
	f.freshMs = int64(f.waitSeconds)*1000 + DefaultFreshGraceMs
	f.ctx, f.cancel = context.WithCancel(context.Background())
	go f.run()
	return f, nil
}

// Close stops the follower and waits for its goroutine to end.
func (f *Follower) Close() {
	f.cancel()
	<-f.done
}

// Stop stops the follower without waiting (for a JS event handler, which
// must not block). From then on its sessions are refused.
func (f *Follower) Stop() { f.cancel() }

// Ready is closed once the keys and the feed were fetched the first time.
func (f *Follower) Ready() <-chan struct{} { return f.ready }

// run fetches the keys, then long-polls the feed, backing off on errors.
func (f *Follower) run() {
	defer close(f.done)
	backoff := int64(0)
	for f.ctx.Err() == nil {
		start := time.Now()
		more, err := f.sync()
		if err == nil {
			backoff = 0
			// An authority that answers at once again and again (broken,
			// hostile, or catching a follower up) is asked at most once
			// per minPollGap (catchUpGap while its answers hold entries),
			// in real time, so a page never spins on it.
			gap := minPollGap
			if more {
				gap = catchUpGap
			}
			if gap -= time.Since(start); gap > 0 {
				select {
				case <-time.After(gap):
				case <-f.ctx.Done():
				}
			}
			continue
		}
		if f.ctx.Err() != nil {
			return
		}
		backoff = min(max(backoff*2, 250), maxBackoffMs)
		_ = f.clock.Sleep(f.ctx, backoff)
	}
}

// sync fetches the keys if it has none, then polls the feed once; more
// reports an answer that held entries (there may be more at once).
func (f *Follower) sync() (more bool, err error) {
	f.mu.Lock()
	haveKeys := len(f.keys) > 0
	f.mu.Unlock()
	if !haveKeys {
		if err := f.fetchKeys(f.ctx); err != nil {
			return false, err
		}
	}
	return f.poll()
}

type feedAnswer struct {
	// Epoch names the authority's store's history: another epoch than
	// the one the follower read means the store was restored, so its
	// cursors started again and its keys changed.
	Epoch   string `json:"epoch"`
	Cursor  string `json:"cursor"`
	Revoked []struct {
		SessionID string `json:"sessionId"`
		// ExpiresAt is the session's expiry (RFC 3339), when the
		// authority gives it: past it (and a grace), no token of the
		// session is live, so the entry can be forgotten.
		ExpiresAt string `json:"expiresAt"`
	} `json:"revoked"`
}

// poll asks the feed for what follows the cursor: at once when the last
// answer was not empty (catching up), else waiting up to waitSeconds.
func (f *Follower) poll() (more bool, err error) {
	f.mu.Lock()
	cursor, epoch, synced := f.cursor, f.epoch, f.synced && !f.overflow
	f.mu.Unlock()
	wait := f.waitSeconds
	if !synced {
		wait = 0
	}
	q := "waitSeconds=" + strconv.Itoa(wait)
	if cursor != "" {
		q = "after=" + cursor + "&" + q
	}
	if epoch != "" {
		q += "&epoch=" + epoch // another epoch is answered at once
	}
	ctx, cancel := context.WithTimeout(f.ctx, time.Duration(wait)*time.Second+10*time.Second)
	defer cancel()
	st, body, err := f.tr.Do(ctx, "GET", f.base+"/v1/revocations?"+q, "", nil)
	if err != nil {
		return false, err
	}
	if st != 200 {
		return false, errors.New("pling: the revocation feed answered " + strconv.Itoa(st))
	}
	var a feedAnswer
	if err := json.Unmarshal(body, &a); err != nil || !digits(a.Cursor) || !urlsafe.ID(a.Epoch) && a.Epoch != "" {
		return false, errors.New("pling: the revocation feed's answer is malformed")
	}
	for _, r := range a.Revoked {
		// A session id is what the authority makes: an entry of any other
		// shape (a hostile feed's megabyte "id") is kept nowhere.
		if !urlsafe.ID(r.SessionID) {
			return false, errors.New("pling: the revocation feed's answer is malformed")
		}
	}
	now := f.clock.NowMs()
	f.mu.Lock()
	defer f.mu.Unlock()
	if a.Epoch != f.epoch {
		if f.feedOKMs != 0 {
			// The store was restored: its cursors started again and its
			// keys changed. Read the feed from its start and fetch the
			// keys again; until then the feed is not current (fail
			// closed). The revocations known already stay known.
			f.epoch, f.cursor, f.overflow, f.restored = a.Epoch, "", true, true
			f.keys, f.tv, f.tvUntilMs = map[string]keyEntry{}, nil, 0
			return true, nil
		}
		f.epoch = a.Epoch
	}
	for _, r := range a.Revoked {
		if len(f.revoked) >= MaxRevoked {
			f.forgetExpired(now)
		}
		if len(f.revoked) >= MaxRevoked {
			// Fail closed, never forget a live revocation: start again
			// from the feed's start, which holds only the revocations
			// that may still matter (a snapshot of the live ones); until
			// that catches up the feed is not current.
			f.overflow = true
			f.cursor, f.revoked = "", map[string]int64{}
			return true, nil
		}
		var exp int64
		if t, err := time.Parse(time.RFC3339Nano, r.ExpiresAt); err == nil {
			exp = t.UnixMilli()
		}
		f.revoked[r.SessionID] = exp
	}
	f.cursor = a.Cursor
	f.feedOKMs = now
	// Caught up when the answer was empty: from now on the polls wait.
	if len(a.Revoked) == 0 {
		f.overflow, f.restored = false, false
		if !f.synced {
			f.synced = true
			close(f.ready)
		}
	}
	// Fast only while pages of entries move the cursor on (a start
	// reading the live revocations): an answer that repeats itself, or
	// holds a few entries, waits the full gap.
	return len(a.Revoked) >= catchUpEntries && cursorAfter(a.Cursor, cursor), nil
}

// cursorAfter reports whether cursor a is past b ("" is the start).
func cursorAfter(a, b string) bool {
	return len(a) > len(b) || len(a) == len(b) && a > b
}

type keysAnswer struct {
	Keys []struct {
		Kid       string  `json:"kid"`
		Alg       string  `json:"alg"`
		PublicKey string  `json:"publicKey"`
		NotAfter  *string `json:"notAfter"`
	} `json:"keys"`
}

// fetchKeys replaces the key set with the authority's.
func (f *Follower) fetchKeys(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	st, body, err := f.tr.Do(ctx, "GET", f.base+"/v1/keys", "", nil)
	if err != nil {
		return err
	}
	if st != 200 {
		return errors.New("pling: the authority's keys answered " + strconv.Itoa(st))
	}
	var a keysAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return errors.New("pling: the authority's keys are malformed")
	}
	keys := map[string]keyEntry{}
	for _, k := range a.Keys {
		pub, err := base64.RawURLEncoding.DecodeString(k.PublicKey)
		if k.Alg != "Ed25519" || err != nil || len(pub) != ed25519.PublicKeySize {
			continue
		}
		e := keyEntry{pub: pub}
		if k.NotAfter != nil {
			t, err := time.Parse(time.RFC3339, *k.NotAfter)
			if err != nil {
				continue
			}
			e.notAfterMs = t.UnixMilli()
		}
		keys[k.Kid] = e
	}
	if len(keys) == 0 {
		return errors.New("pling: the authority publishes no usable key")
	}
	f.mu.Lock()
	f.keys = keys
	f.tv, f.tvUntilMs = nil, 0
	f.mu.Unlock()
	return nil
}

// verifier returns the token verifier over the keys live at nowMs,
// building it when the keys changed or one passed its notAfter.
func (f *Follower) verifier(nowMs int64) (*runtime.TokenVerifier, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tv != nil && (f.tvUntilMs == 0 || nowMs < f.tvUntilMs) {
		return f.tv, nil
	}
	live := map[string]ed25519.PublicKey{}
	until := int64(0)
	for kid, k := range f.keys {
		if k.notAfterMs != 0 {
			if nowMs >= k.notAfterMs {
				continue
			}
			if until == 0 || k.notAfterMs < until {
				until = k.notAfterMs
			}
		}
		live[kid] = k.pub
	}
	tv, err := runtime.NewTokenVerifier(live, f.audience, runtime.RevocationFunc(f.isRevoked))
	if err != nil {
		return nil, err
	}
	f.tv, f.tvUntilMs = tv, until
	return tv, nil
}

func (f *Follower) isRevoked(_ context.Context, id, _ string) (bool, error) {
	f.mu.Lock()
	_, r := f.revoked[id]
	f.mu.Unlock()
	return r, nil
}

func refused(msg string) error { return perr.New(perr.SessionInvalid, msg, nil) }

// Verify implements runtime.SessionVerifier for the authority's tokens.
func (f *Follower) Verify(ctx context.Context, token string, nowMs int64) (schema.SurfaceSession, error) {
	if err := f.awaitReady(ctx); err != nil {
		return schema.SurfaceSession{}, err
	}
	if err := f.fresh(nowMs); err != nil {
		return schema.SurfaceSession{}, err
	}
	kid, ok := tokenKid(token)
	if !ok {
		return schema.SurfaceSession{}, refused("The session token is malformed")
	}
	if !f.knows(kid, nowMs) {
		f.refetch(ctx, kid, nowMs)
	}
	tv, err := f.verifier(nowMs)
	if err != nil {
		return schema.SurfaceSession{}, refused("The page has no live key of its authority")
	}
	ss, err := tv.Verify(ctx, token, nowMs)
	if err != nil {
		return ss, err
	}
	f.remember(token, ss.ExpiresAtMs, nowMs)
	return ss, nil
}

// awaitReady waits, bounded, for the first sync with the authority.
func (f *Follower) awaitReady(ctx context.Context) error {
	select {
	case <-f.ready:
		return nil
	default:
	}
	select {
	case <-f.ready:
		return nil
	case <-f.clock.After(ReadyWaitMs):
	case <-ctx.Done():
	case <-f.ctx.Done():
	}
	return refused("The page has not reached its authority, so it cannot tell whether the session was revoked")
}

// Current reports an error while the revocation feed is not known to be
// current (never synced, its last answer too old, or re-reading it after
// the revoked set passed MaxRevoked or the store was restored).
func (f *Follower) Current(nowMs int64) error { return f.fresh(nowMs) }

// Waiting says what the follower waits for before it can accept a
// delegated token ("" when it waits for nothing): what a /readyz says.
func (f *Follower) Waiting(nowMs int64) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := strconv.Itoa(len(f.revoked))
	switch {
	case f.feedOKMs == 0 && len(f.keys) == 0:
		return "authority keys not fetched"
	case !f.synced:
		return "reading the revocation feed (" + n + " revocations so far)"
	case f.restored:
		return "re-reading the revocation feed: the authority's store was restored (" + n + " revocations so far)"
	case f.overflow:
		return "re-reading the revocation feed from its start (" + n + " revocations so far)"
	case nowMs-f.feedOKMs > f.freshMs:
		return "revocation feed not current (no answer for " + strconv.FormatInt((nowMs-f.feedOKMs)/1000, 10) + " s)"
	}
	return ""
}

// revokedGraceMs is how long past its session's expiry a revocation is
// kept (the clock skew between the authority and this host).
const revokedGraceMs = 5 * 60_000

// forgetExpired drops the revocations of sessions expired more than the
// grace ago (holding mu).
func (f *Follower) forgetExpired(nowMs int64) {
	for id, exp := range f.revoked {
		if exp > 0 && exp+revokedGraceMs < nowMs {
			delete(f.revoked, id)
		}
	}
}

// fresh reports an error while the feed is not known to be current.
func (f *Follower) fresh(nowMs int64) error {
	f.mu.Lock()
	ok := f.synced && !f.overflow && nowMs-f.feedOKMs <= f.freshMs
	f.mu.Unlock()
	if !ok {
		return refused("The page's revocation feed is not current, so it cannot tell whether the session was revoked")
	}
	return nil
}

func (f *Follower) knows(kid string, nowMs int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	k, ok := f.keys[kid]
	return ok && (k.notAfterMs == 0 || nowMs < k.notAfterMs)
}

// refetch fetches the keys again for an unknown kid, at most once per
// KeyRefetchMs; concurrent callers share one fetch.
func (f *Follower) refetch(ctx context.Context, kid string, nowMs int64) {
	f.fetchMu.Lock()
	defer f.fetchMu.Unlock()
	f.mu.Lock()
	_, known := f.keys[kid]
	recent := nowMs-f.keyFetchMs < KeyRefetchMs
	f.mu.Unlock()
	if known || recent {
		return
	}
	// Only these fetches count: a key rotated just after the page started
	// is fetched at once, a stream of forged kids at most once a window.
	f.mu.Lock()
	f.keyFetchMs = nowMs
	f.mu.Unlock()
	_ = f.fetchKeys(ctx) // a failed fetch keeps the old keys; the token is refused
}

// tokenKid is the kid of a pl1 token's form, or false.
func tokenKid(token string) (string, bool) {
	if len(token) > runtime.MaxTokenLen || !strings.HasPrefix(token, "pl1.") {
		return "", false
	}
	rest := token[4:]
	i := strings.IndexByte(rest, '.')
	if i <= 0 || i > 64 {
		return "", false
	}
	return rest[:i], true
}

// remember keeps the session id and token of a token that verified, by
// its session key, for the shared replay guard. The claims are read again
// only for a token not held yet (the signature has verified).
func (f *Follower) remember(token string, expMs, nowMs int64) {
	key := sessionkey.Of(token)
	f.mu.Lock()
	_, ok := f.sessions[key]
	f.mu.Unlock()
	if ok {
		return
	}
	parts := strings.Split(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return
	}
	var c struct {
		ID string `json:"jti"`
	}
	if json.Unmarshal(payload, &c) != nil || !urlsafe.ID(c.ID) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sessions) >= MaxSessions {
		for k, d := range f.sessions {
			if nowMs >= d.expMs {
				delete(f.sessions, k)
			}
		}
		for k := range f.sessions {
			if len(f.sessions) < MaxSessions*3/4 {
				break
			}
			delete(f.sessions, k)
		}
	}
	f.sessions[key] = delegated{id: c.ID, token: token, expMs: expMs}
}

func (f *Follower) session(key string) (delegated, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.sessions[key]
	return d, ok
}

// validBase is an http(s) URL with a host and no query, fragment or
// credentials (net/url is not in the module; this is enough to refuse a
// mistyped configuration, the browser's fetch parses the rest).
func validBase(s string) bool {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(s, "http://")
	}
	host, _, _ := strings.Cut(rest, "/")
	return ok && len(s) <= 2048 && host != "" && !strings.ContainsAny(s, "?#@ \t\r\n\\")
}

// digits reports a feed cursor: 1–20 decimal digits.
func digits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
