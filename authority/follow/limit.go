package follow

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// Limiter returns the page's rate limiter with the invoke limit of a
// delegated session kept at the authority (docs/authority.md "Invoke
// limit"), for runtime.WithLimiter: every invoke of a session the follower
// verified takes a token of that session's one bucket there (POST
// …/sessions/{id}/invokes, sized by r.Invoke), so the page's tabs, its
// reloads and other hosts of the same session share one burst. Describe,
// and every request without a session, stay in this page's own buckets
// (r). A session the follower did not verify, or an authority that does
// not answer, is an error: the runtime refuses the invoke with
// RATE_LIMIT_UNAVAILABLE (fail closed). It costs one round trip to the
// authority per delegated invoke.
func (f *Follower) Limiter(r runtime.RateLimit) runtime.Limiter {
	return &sharedLimiter{f: f, local: runtime.NewTokenBucketLimiter(r), invoke: r.Invoke}
}

type sharedLimiter struct {
	f      *Follower
	local  runtime.Limiter
	invoke runtime.Bucket
}

// Allow implements runtime.Limiter.
func (l *sharedLimiter) Allow(ctx context.Context, key string, method schema.Method, nowMs int64) (bool, int64, error) {
	if method != schema.MethodInvoke || key == runtime.AnonymousSessionKey || l.invoke.Burst <= 0 {
		return l.local.Allow(ctx, key, method, nowMs)
	}
	d, ok := l.f.session(key)
	if !ok {
		return false, 0, errNotDelegated
	}
	body, err := json.Marshal(map[string]any{"burst": l.invoke.Burst, "perSecond": max(l.invoke.PerSecond, 0)})
	if err != nil {
		return false, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	// The session id is of a URL-safe alphabet (remember).
	st, resp, err := l.f.tr.Do(ctx, "POST", l.f.base+"/v1/sessions/"+d.id+"/invokes", d.token, body)
	if err != nil {
		return false, 0, err
	}
	switch st {
	case 200:
		return true, 0, nil
	case 429:
		var a struct {
			Error struct {
				Details struct {
					RetryAfterMs int64 `json:"retryAfterMs"`
				} `json:"details"`
			} `json:"error"`
		}
		if json.Unmarshal(resp, &a) != nil || a.Error.Details.RetryAfterMs <= 0 {
			return false, 0, errors.New("pling: the authority's invoke limit answer is malformed")
		}
		return false, a.Error.Details.RetryAfterMs, nil
	}
	return false, 0, errors.New("pling: the authority's invoke limit answered " + strconv.Itoa(st))
}
