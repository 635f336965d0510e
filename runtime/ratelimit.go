package runtime

import (
	"context"
	"math"
	"sync"

	"github.com/pling-go/pling/schema"
)

// Limiter decides step 7 of the check order. Allow takes one token for the
// session key and method, or says how long to wait. An error means the
// limiter failed; the gate then refuses the request with
// RATE_LIMIT_UNAVAILABLE (fail closed).
type Limiter interface {
	Allow(ctx context.Context, sessionKey string, method schema.Method, nowMs int64) (ok bool, retryAfterMs int64, err error)
}

// Bucket is a token bucket: Burst tokens at most, refilled at PerSecond.
type Bucket struct {
	Burst     int
	PerSecond float64
}

// RateLimit sets separate budgets for describe and invoke, per session (or
// per anonymous page).
type RateLimit struct {
	Describe Bucket
	Invoke   Bucket
}

// DefaultRateLimit is the budget used unless configured otherwise.
func DefaultRateLimit() RateLimit {
	return RateLimit{Describe: Bucket{Burst: 120, PerSecond: 10}, Invoke: Bucket{Burst: 60, PerSecond: 5}}
}

// WithRateLimit sets the built-in token bucket limiter's budgets.
func WithRateLimit(r RateLimit) Option {
	return func(cfg *config) { cfg.gate.limiter = NewTokenBucketLimiter(r) }
}

// TokenBucketLimiter is the built-in Limiter. Levels are kept in
// nano-tokens and rates in nano-tokens per millisecond, integers both, so
// that waiting exactly retryAfterMs always finds a whole token, and slow
// rates (one per ten minutes) refill exactly.
type TokenBucketLimiter struct {
	cfg RateLimit
	mu  sync.Mutex
	m   map[bucketKey]*bucketState
}

type bucketKey struct {
	session string
	method  schema.Method
}

type bucketState struct {
	level int64 // nano-tokens
	atMs  int64
}

const nanoToken = 1_000_000_000

// maxBuckets bounds the limiter's memory; full buckets (idle sessions)
// are dropped first, as dropping them changes nothing.
const maxBuckets = 16384

// NewTokenBucketLimiter returns the built-in limiter.
func NewTokenBucketLimiter(r RateLimit) *TokenBucketLimiter {
	return &TokenBucketLimiter{cfg: r, m: map[bucketKey]*bucketState{}}
}

func (l *TokenBucketLimiter) bucket(method schema.Method) Bucket {
	if method == schema.MethodDescribe {
		return l.cfg.Describe
	}
	return l.cfg.Invoke
}

// rateOf is a bucket's refill in nano-tokens per millisecond (at least 1
// when it refills at all).
func rateOf(b Bucket) int64 {
	if b.PerSecond <= 0 {
		return 0
	}
	return max(int64(math.Round(b.PerSecond*1e6)), 1)
}

// refill brings a bucket's level up to now.
func refill(s *bucketState, capacity, rate, nowMs int64) {
	if nowMs <= s.atMs {
		return
	}
	elapsed := nowMs - s.atMs
	if rate > 0 && elapsed >= (capacity-s.level)/rate+1 {
		s.level = capacity // also avoids overflow on long idle times
	} else {
		s.level = min(capacity, s.level+elapsed*rate)
	}
	s.atMs = nowMs
}

// Allow implements Limiter.
func (l *TokenBucketLimiter) Allow(_ context.Context, session string, method schema.Method, nowMs int64) (bool, int64, error) {
	b := l.bucket(method)
	if b.Burst <= 0 {
		return true, 0, nil // no budget configured: unlimited
	}
	capacity := int64(b.Burst) * nanoToken
	rate := rateOf(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	k := bucketKey{session, method}
	s := l.m[k]
	if s == nil {
		if len(l.m) >= maxBuckets {
			l.prune(nowMs)
		}
		s = &bucketState{level: capacity, atMs: nowMs}
		l.m[k] = s
	}
	refill(s, capacity, rate, nowMs)
	if s.level >= nanoToken {
		s.level -= nanoToken
		return true, 0, nil
	}
	if rate <= 0 {
		return false, 3_600_000, nil // never refills: try again in an hour
	}
	need := nanoToken - s.level
	return false, (need + rate - 1) / rate, nil
}

func (l *TokenBucketLimiter) prune(nowMs int64) {
	for k, s := range l.m {
		b := l.bucket(k.method)
		capacity := int64(b.Burst) * nanoToken
		refill(s, capacity, rateOf(b), nowMs)
		if s.level >= capacity {
			delete(l.m, k)
		}
	}
	if len(l.m) >= maxBuckets {
		// Still full of active buckets: forget the oldest. A forgotten
		// bucket restarts full, so this errs toward allowing, within the
		// burst, only under extreme key churn.
		var oldest bucketKey
		at := int64(-1)
		for k, s := range l.m {
			if at < 0 || s.atMs < at {
				oldest, at = k, s.atMs
			}
		}
		delete(l.m, oldest)
	}
}
