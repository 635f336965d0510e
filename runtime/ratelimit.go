package runtime

import (
	"context"
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
// micro-tokens and rates in micro-tokens per millisecond, integers both, so
// that waiting exactly retryAfterMs always finds a whole token.
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
	level int64 // micro-tokens
	atMs  int64
}

const microToken = 1_000_000

// maxBuckets bounds the limiter's memory; full buckets (idle sessions)
// are dropped first, as dropping them changes nothing.
const maxBuckets = 16384

// NewTokenBucketLimiter returns the built-in limiter.
func NewTokenBucketLimiter(r RateLimit) *TokenBucketLimiter {
	return &TokenBucketLimiter{cfg: r, m: map[bucketKey]*bucketState{}}
}

// Allow implements Limiter.
func (l *TokenBucketLimiter) Allow(_ context.Context, session string, method schema.Method, nowMs int64) (bool, int64, error) {
	b := l.cfg.Invoke
	if method == schema.MethodDescribe {
		b = l.cfg.Describe
	}
	if b.Burst <= 0 {
		return true, 0, nil // no budget configured: unlimited
	}
	capacity := int64(b.Burst) * microToken
	rate := int64(b.PerSecond * 1000) // micro-tokens per ms
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
	if nowMs > s.atMs {
		s.level = min(capacity, s.level+(nowMs-s.atMs)*rate)
		s.atMs = nowMs
	}
	if s.level >= microToken {
		s.level -= microToken
		return true, 0, nil
	}
	if rate <= 0 {
		return false, 3_600_000, nil // never refills: wait an hour
	}
	need := microToken - s.level
	return false, (need + rate - 1) / rate, nil
}

func (l *TokenBucketLimiter) prune(nowMs int64) {
	for k, s := range l.m {
		b := l.cfg.Invoke
		if k.method == schema.MethodDescribe {
			b = l.cfg.Describe
		}
		if s.level+(nowMs-s.atMs)*int64(b.PerSecond*1000) >= int64(b.Burst)*microToken {
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
