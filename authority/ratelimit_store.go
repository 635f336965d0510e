package authority

import (
	"context"
	"github.com/pling-go/pling/internal/ratelimit"
	"math"
	"net/http"
	"time"
)

// rateLimiter decides whether one more request of key may pass now; when
// not, it says how long until one may. It is the small interface every
// rate limit of the authority sits behind: the in-memory token bucket of
// one instance (ratelimit.go) and the store's, shared by every instance
// of a store (StoreLimiter).
type rateLimiter = ratelimit.Limiter

// RateStore is a store that keeps token buckets (sqlStore does).
type RateStore interface {
	// TakeToken takes one token of key's bucket (burst, refilled at
	// perSecond) at nowMs, atomically across instances; when there is
	// none it says how long until there is.
	TakeToken(ctx context.Context, key string, burst, perSecond float64, nowMs int64) (ok bool, retryMs int64, err error)
}

// StoreLimiter is a token bucket per key kept in the store, so that N
// instances sharing it allow the limit once, not N times. A store that
// does not answer in time refuses (fail closed).
type StoreLimiter struct {
	Store     RateStore
	Prefix    string // names the limit, so that limits share one table
	Burst     float64
	PerSecond float64
	Now       func() time.Time
}

// storeLimitTimeout bounds one bucket update.
const storeLimitTimeout = 2 * time.Second

func (l *StoreLimiter) Allow(key string) (bool, time.Duration) {
	ok, retry, err := l.AllowErr(context.Background(), key)
	if err != nil {
		return false, time.Second // fail closed
	}
	return ok, retry
}

// AllowErr is Allow with the store's error, for a caller that answers it
// as the store being down rather than as a limit.
func (l *StoreLimiter) AllowErr(ctx context.Context, key string) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, storeLimitTimeout)
	defer cancel()
	ok, retryMs, err := l.Store.TakeToken(ctx, l.Prefix+key, l.Burst, l.PerSecond, l.Now().UnixMilli())
	return ok, time.Duration(retryMs) * time.Millisecond, err
}

// Ping reports whether the limiter's store answers within the time a
// bucket update has (what a /readyz asks): a store without Ping answers.
func (l *StoreLimiter) Ping(ctx context.Context) error {
	p, ok := l.Store.(interface{ Ping(context.Context) error })
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeLimitTimeout)
	defer cancel()
	return p.Ping(ctx)
}

// allowCreate applies the create limit to r; false when it answered
// (429, or 500 when the store could not say: refused either way).
func (s *Server) allowCreate(w http.ResponseWriter, r *http.Request) bool {
	return s.allowBy(w, r, s.createLimit, s.forwardedClient(r))
}

// allowBy applies limit (nil: off) to key; false when it answered.
func (s *Server) allowBy(w http.ResponseWriter, r *http.Request, limit rateLimiter, key string) bool {
	if limit == nil {
		return true
	}
	var ok bool
	var retry time.Duration
	if sl, isStore := limit.(*StoreLimiter); isStore {
		var err error
		if ok, retry, err = sl.AllowErr(r.Context(), key); err != nil {
			s.internal(w, r, err)
			return false
		}
	} else {
		ok, retry = limit.Allow(key)
	}
	if !ok {
		s.rateLimited(w, retry.Milliseconds())
	}
	return ok
}

// newCreateLimiter is the limit of POST /v1/delegations: in the store when
// it keeps buckets, else in memory; nil when off.
func newCreateLimiter(cfg Config) rateLimiter {
	if cfg.CreateBurst <= 0 || cfg.CreatePerSecond <= 0 {
		return nil
	}
	if rs, ok := cfg.Store.(RateStore); ok {
		return &StoreLimiter{Store: rs, Prefix: "create:", Burst: float64(cfg.CreateBurst), PerSecond: cfg.CreatePerSecond, Now: cfg.Now}
	}
	return newCreateLimit(cfg) // this instance's memory (internal/ratelimit)
}

// takeTokenSQL takes one token of a bucket in one statement. The new
// row's values are the bucket's burst less one and now, so an existing
// row refills from excluded.tokens + 1 (the burst) and excluded.at_ms
// (now); every number is bound, so the statement text never changes and
// the database prepares it once.
var takeTokenSQL = func() string {
	perMs := `CAST(? AS DOUBLE PRECISION)`
	elapsed := `(CASE WHEN excluded.at_ms > b.at_ms THEN excluded.at_ms - b.at_ms ELSE 0 END)`
	refill := `(CASE WHEN b.tokens + ` + elapsed + ` * ` + perMs + ` >= excluded.tokens + 1 THEN excluded.tokens + 1 ELSE b.tokens + ` + elapsed + ` * ` + perMs + ` END)`
	return `INSERT INTO rate_buckets AS b (bucket, tokens, at_ms) VALUES (?, CAST(? AS DOUBLE PRECISION), CAST(? AS BIGINT))
		ON CONFLICT (bucket) DO UPDATE SET tokens = ` + refill + ` - 1,
		at_ms = (CASE WHEN excluded.at_ms > b.at_ms THEN excluded.at_ms ELSE b.at_ms END)
		WHERE ` + refill + ` >= 1`
}()

// newApprovalLimiter is the per-address limit of POST /v1/approvals, kept
// as the create limit is; nil when off.
func newApprovalLimiter(cfg Config) rateLimiter {
	if cfg.ApprovalBurst <= 0 || cfg.ApprovalPerSecond <= 0 {
		return nil
	}
	if rs, ok := cfg.Store.(RateStore); ok {
		return &StoreLimiter{Store: rs, Prefix: "approval:", Burst: float64(cfg.ApprovalBurst), PerSecond: cfg.ApprovalPerSecond, Now: cfg.Now}
	}
	k := ratelimit.New(cfg.ApprovalPerSecond, cfg.ApprovalBurst, ratelimit.WithClock(cfg.Now))
	if k == nil {
		return nil
	}
	return k
}

func (s *sqlStore) TakeToken(ctx context.Context, key string, burst, perSecond float64, nowMs int64) (bool, int64, error) {
	perMs := perSecond / 1000
	r, err := s.db.ExecContext(ctx, takeTokenSQL, key, burst-1, nowMs, perMs, perMs, perMs, perMs)
	if err != nil {
		return false, 0, err
	}
	if n, err := r.RowsAffected(); err != nil {
		return false, 0, err
	} else if n == 1 {
		return true, 0, nil
	}
	var tokens float64
	var at int64
	if err := s.db.QueryRowContext(ctx, `SELECT tokens, at_ms FROM rate_buckets WHERE bucket = ?`, key).Scan(&tokens, &at); err != nil {
		return false, 0, err
	}
	tokens = math.Min(burst, tokens+float64(max(nowMs-at, 0))*perSecond/1000)
	return false, int64(math.Ceil((1 - tokens) * 1000 / perSecond)), nil
}
