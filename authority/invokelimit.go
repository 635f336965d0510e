package authority

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"

	perr "github.com/pling-go/pling/errors"
)

// The invoke limit of a delegated session, shared by every page that
// follows the authority (docs/authority.md "Invoke limit"): a page counts
// each invoke of a delegated session here, in one bucket per session, so
// a second tab, a reload or another host of the same session draws on the
// same burst instead of a fresh one.
//
//	POST /v1/sessions/{sessionId}/invokes {burst, perSecond} → 200 | 429 {error: RATE_LIMITED, retryAfterMs}
//
// It is authenticated by the session's own pl1 token as bearer, like the
// shared replay guard. The page says the bucket's size (its configured
// invoke limit): whoever holds the token can only spend its own session's
// bucket, and a bucket never holds more than the size the last call gave.

// Bounds of the bucket a page may ask for.
const (
	maxInvokeBurst     = 100_000
	maxInvokePerSecond = 100_000
	// neverRefillsMs is the wait answered by a bucket that never refills
	// (perSecond 0), as the runtime answers it.
	neverRefillsMs = 3_600_000
)

type invokeLimitReq struct {
	Burst     *int64   `json:"burst"`
	PerSecond *float64 `json:"perSecond"`
}

func (s *Server) takeInvoke(w http.ResponseWriter, r *http.Request) {
	var req invokeLimitReq
	if !s.readBody(w, r, &req, false) {
		return
	}
	if req.Burst == nil || req.PerSecond == nil || *req.Burst < 1 || *req.Burst > maxInvokeBurst ||
		!(*req.PerSecond >= 0 && *req.PerSecond <= maxInvokePerSecond) {
		s.fail(w, perr.DelegationRequestInvalid, "burst (1–100000) and perSecond (0–100000) are required")
		return
	}
	se, ok := s.sessionByBearer(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	ok, retryMs, err := s.invokes.TakeToken(r.Context(), "invoke:"+se.ID, float64(*req.Burst), *req.PerSecond, s.nowMs())
	switch {
	case err != nil:
		s.internal(w, r, err)
	case ok:
		writeJSON(w, http.StatusOK, map[string]any{"status": "allowed"})
	default:
		if *req.PerSecond == 0 || retryMs <= 0 || retryMs > neverRefillsMs {
			retryMs = neverRefillsMs
		}
		w.Header().Set("Retry-After", strconv.FormatInt((retryMs+999)/1000, 10))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{"code": string(perr.RateLimited),
			"message": "The session spent its invoke limit", "details": map[string]any{"retryAfterMs": retryMs}}})
	}
}

// invokeBuckets is where the sessions' invoke buckets live: the store's
// (shared by every instance on it) when it keeps buckets, else this
// instance's memory.
func invokeBuckets(st Store) RateStore {
	if rs, ok := st.(RateStore); ok {
		return rs
	}
	return &memBuckets{m: map[string]memBucket{}}
}

// memBuckets is RateStore in one instance's memory, for a store that
// keeps no buckets. It remembers at most maxMemBuckets buckets; past it,
// full ones are forgotten first (forgetting a full bucket changes
// nothing), and a new key is refused while every one is still draining.
type memBuckets struct {
	mu sync.Mutex
	m  map[string]memBucket
}

type memBucket struct {
	tokens float64
	atMs   int64
}

const maxMemBuckets = 10_000

func (b *memBuckets) TakeToken(_ context.Context, key string, burst, perSecond float64, nowMs int64) (bool, int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	level := func(e memBucket) float64 {
		return math.Min(burst, e.tokens+float64(max(nowMs-e.atMs, 0))*perSecond/1000)
	}
	e, ok := b.m[key]
	if !ok {
		if len(b.m) >= maxMemBuckets {
			for k, o := range b.m {
				if level(o) >= burst {
					delete(b.m, k)
				}
			}
			if len(b.m) >= maxMemBuckets {
				return false, 1000, nil
			}
		}
		e = memBucket{tokens: burst, atMs: nowMs}
	}
	e.tokens, e.atMs = level(e), max(nowMs, e.atMs)
	if e.tokens < 1 {
		b.m[key] = e
		if perSecond <= 0 {
			return false, neverRefillsMs, nil
		}
		return false, int64(math.Ceil((1 - e.tokens) * 1000 / perSecond)), nil
	}
	e.tokens--
	b.m[key] = e
	return true, 0, nil
}
