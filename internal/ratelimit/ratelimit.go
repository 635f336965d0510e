// Package ratelimit is the servers' keyed rate limiter: a token bucket
// (golang.org/x/time/rate) per key — a client address for the
// authority's delegation requests, a caller for the gateway — in bounded
// memory. The runtime keeps its own integer limiter (RATIONALE "Why does
// the runtime count its rate limits in integers?"); this one is for the
// servers.
//
// A Keyed limiter counts in this process's memory. Limiter is the small
// interface the servers hold, so a limiter shared across instances
// (through their store) can take its place.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter decides whether the request of key may go ahead now; when it
// may not, retryAfter says how long until it may (and nothing was spent).
type Limiter interface {
	Allow(key string) (ok bool, retryAfter time.Duration)
}

// DefaultMaxKeys bounds the keys a Keyed limiter remembers.
const DefaultMaxKeys = 10_000

// Keyed is a token bucket per key: burst tokens, refilled at perSecond.
// It remembers at most maxKeys keys: a bucket that has refilled is the
// same as none and is dropped first, and while every remembered bucket
// is still draining a new key is refused (fail closed, never unlimited).
type Keyed struct {
	limit   rate.Limit
	burst   int
	maxKeys int
	now     func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
}

// Option configures a Keyed limiter.
type Option func(*Keyed)

// WithClock sets the limiter's clock (tests; the authority's own clock).
func WithClock(now func() time.Time) Option { return func(k *Keyed) { k.now = now } }

// WithMaxKeys sets how many keys the limiter remembers (DefaultMaxKeys).
func WithMaxKeys(n int) Option { return func(k *Keyed) { k.maxKeys = n } }

// New returns a limiter of burst tokens per key refilled at perSecond, or
// nil (no limit) when either is not positive.
func New(perSecond float64, burst int, opts ...Option) *Keyed {
	if perSecond <= 0 || burst <= 0 {
		return nil
	}
	k := &Keyed{limit: rate.Limit(perSecond), burst: burst, maxKeys: DefaultMaxKeys, now: time.Now, buckets: map[string]*rate.Limiter{}}
	for _, o := range opts {
		o(k)
	}
	k.swept = k.now()
	return k
}

// Allow takes one token of key's bucket; when there is none it spends
// nothing and says how long until there is one. A nil *Keyed allows all.
func (k *Keyed) Allow(key string) (bool, time.Duration) {
	if k == nil {
		return true, 0
	}
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	// Drop refilled buckets once per refill period, and whenever a new
	// key finds the map full.
	if now.Sub(k.swept) > k.refill() {
		k.sweep(now)
	}
	b := k.buckets[key]
	if b == nil {
		if len(k.buckets) >= k.maxKeys {
			k.sweep(now)
			if len(k.buckets) >= k.maxKeys {
				return false, k.perToken()
			}
		}
		b = rate.NewLimiter(k.limit, k.burst)
		b.SetBurstAt(now, k.burst) // full at now on the limiter's clock
		k.buckets[key] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// Len is how many keys the limiter remembers now.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.buckets)
}

// sweep drops the buckets that are full at now (holding mu).
func (k *Keyed) sweep(now time.Time) {
	for key, b := range k.buckets {
		if b.TokensAt(now) >= float64(k.burst) {
			delete(k.buckets, key)
		}
	}
	k.swept = now
}

// refill is how long an empty bucket takes to be full again.
func (k *Keyed) refill() time.Duration {
	return time.Duration(float64(k.burst) / float64(k.limit) * float64(time.Second))
}

// perToken is how long one token takes to come back.
func (k *Keyed) perToken() time.Duration {
	return time.Duration(float64(time.Second) / float64(k.limit))
}
