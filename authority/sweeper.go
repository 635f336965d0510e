package authority

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The background sweeper: retention for every table (docs/operations.md
// "Retention"), outside any client request. One instance at a time runs
// it (a lease row in the store, on the database's clock on PostgreSQL);
// each run deletes in batches of SweepBatch rows, each batch its own
// short statement, one batch of each table in turn, under the run's own
// deadline, so that a backlog of a
// million rows costs client writes a few milliseconds of waiting per
// batch, never a client's whole budget.

// Retention defaults.
const (
	// DefaultRetention is how long delegations, sessions and their
	// records are kept past their expiry.
	DefaultRetention = 24 * time.Hour
	// DefaultRevocationGrace is how long a revocation stays in the feed
	// past its session's expiry (the clock skew a follower may have).
	DefaultRevocationGrace = 5 * time.Minute
	// DefaultTaskIdle is how long a task nobody writes is kept.
	DefaultTaskIdle = 30 * 24 * time.Hour
	// DefaultSweepEvery is the time between two sweeps.
	DefaultSweepEvery = time.Minute
	// DefaultSweepBatch is the rows one delete statement removes at most
	// (SQLite: sqliteSweepBatch, its one writer held a fifth as long).
	DefaultSweepBatch = 500
	sqliteSweepBatch  = 100
	// DefaultSweepTimeout bounds one sweep; what is left waits for the next.
	DefaultSweepTimeout = 30 * time.Second
	// DefaultMaxPendingPerAudience bounds the pending delegations of one
	// audience.
	DefaultMaxPendingPerAudience = 10_000
	// DefaultMaxPendingPerAddress bounds the pending delegations one
	// client address asked for (an agent waits for one consent at a
	// time), so that a few addresses cannot fill an audience's bound.
	DefaultMaxPendingPerAddress = 10
	// sweepBatchTimeout bounds one batch's statement.
	sweepBatchTimeout = 5 * time.Second
	// sweepPause is the pause between two batches: the store's writers
	// (SQLite has one at a time) get their turn.
	sweepPause     = 5 * time.Millisecond
	sweepLeaseName = "sweeper"
	// reclaimPages bounds the free pages one sweep gives back to a SQLite
	// file (16 MiB at SQLite's default 4 KiB page): a backlog shrinks the
	// file over a few sweeps without one long write lock.
	reclaimPages = 4096
)

// RetentionConfig configures retention and the sweeper; zero values take
// the defaults above.
type RetentionConfig struct {
	Retention       time.Duration
	RevocationGrace time.Duration
	TaskIdle        time.Duration
	SweepEvery      time.Duration
	SweepBatch      int
	SweepTimeout    time.Duration
	// MaxPendingPerAudience bounds pending delegations per audience
	// (negative: no bound).
	MaxPendingPerAudience int64
	// MaxPendingPerAddress bounds pending delegations per client address
	// (default DefaultMaxPendingPerAddress; negative: no bound).
	MaxPendingPerAddress int64
}

func (c *RetentionConfig) defaults() {
	if c.Retention <= 0 {
		c.Retention = DefaultRetention
	}
	if c.RevocationGrace <= 0 {
		c.RevocationGrace = DefaultRevocationGrace
	}
	if c.TaskIdle <= 0 {
		c.TaskIdle = DefaultTaskIdle
	}
	if c.SweepEvery <= 0 {
		c.SweepEvery = DefaultSweepEvery
	}
	if c.SweepTimeout <= 0 {
		c.SweepTimeout = DefaultSweepTimeout
	}
	if c.MaxPendingPerAddress == 0 {
		c.MaxPendingPerAddress = DefaultMaxPendingPerAddress
	}
	if c.MaxPendingPerAudience == 0 {
		c.MaxPendingPerAudience = DefaultMaxPendingPerAudience
	}
}

// sweepMetrics are the sweeper's metrics.
type sweepMetrics struct {
	rows     *prometheus.CounterVec
	duration prometheus.Histogram
	runs     *prometheus.CounterVec
}

func newSweepMetrics() sweepMetrics {
	return sweepMetrics{
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pling_authority_sweep_rows_total",
			Help: "Rows the background sweeper deleted, by table."}, []string{"table"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pling_authority_sweep_seconds",
			Help: "Duration of the sweeps this instance ran.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pling_authority_sweeps_total",
			Help: "Sweeps by outcome: done, partial (deadline), skipped (another instance holds the lease), error."}, []string{"outcome"}),
	}
}

func (m sweepMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.rows, m.duration, m.runs}
}

// SweepResult is what one sweep did.
type SweepResult struct {
	// Skipped: another instance holds the sweeper's lease.
	Skipped bool
	// Partial: the deadline came before every class was swept.
	Partial bool
	Rows    map[string]int64
}

// total is the rows the sweep deleted, every class together.
func (r SweepResult) total() int64 {
	var n int64
	for _, v := range r.Rows {
		n += v
	}
	return n
}

// SweepOnce runs one sweep now, if this instance can take the sweeper's
// lease (the instance is named by Config's instance id).
func (s *Server) SweepOnce(ctx context.Context) (SweepResult, error) {
	res := SweepResult{Rows: map[string]int64{}}
	ms, ok := s.raw.(MaintenanceStore)
	if !ok {
		return res, nil
	}
	rc := s.cfg.Retention
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, rc.SweepTimeout)
	defer cancel()
	got, err := ms.TryMaintenanceLease(ctx, sweepLeaseName, s.instanceID, s.nowMs(), (rc.SweepTimeout + rc.SweepEvery).Milliseconds())
	if err != nil {
		s.sweeps.runs.WithLabelValues("error").Inc()
		return res, err
	}
	if !got {
		s.sweeps.runs.WithLabelValues("skipped").Inc()
		res.Skipped = true
		return res, nil
	}
	batch := rc.SweepBatch
	if batch <= 0 {
		batch = DefaultSweepBatch
		if sq, ok := s.raw.(*sqlStore); ok && sq.Dialect() == SQLite {
			batch = sqliteSweepBatch
		}
	}
	now := s.nowMs()
	c := SweepCutoffs{NowMs: now, ExpiredMs: now - rc.Retention.Milliseconds(),
		RevokedMs: now - rc.RevocationGrace.Milliseconds(), TaskIdleMs: now - rc.TaskIdle.Milliseconds(),
		LeaseHistoryMs: now - s.cfg.IdempotencyTTL.Milliseconds()}
	defer func() { s.sweeps.duration.Observe(time.Since(start).Seconds()) }()
	// Deleted rows leave free pages in a SQLite file; each sweep that
	// deleted some gives a bounded number back, also after its deadline.
	defer func() {
		if sq, ok := s.raw.(*sqlStore); ok && res.total() > 0 {
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), sweepBatchTimeout)
			defer rcancel()
			if err := sq.ReclaimSpace(rctx, reclaimPages); err != nil {
				s.cfg.Logger.Warn("authority: giving deleted pages back to the file failed", "err", err)
			}
		}
	}()
	// Round robin: one batch of each class that has rows left, then the
	// next round, so that a backlog in one table (a million rows of lease
	// history) never holds the others (rate buckets, replay records)
	// back to a later sweep.
	left := append([]string(nil), SweepClasses...)
	for len(left) > 0 {
		next := left[:0]
		var took time.Duration
		for _, class := range left {
			bctx, bcancel := context.WithTimeout(ctx, sweepBatchTimeout)
			t0 := time.Now()
			n, err := ms.SweepBatch(bctx, class, c, batch)
			took += time.Since(t0)
			bcancel()
			res.Rows[class] += n
			s.sweeps.rows.WithLabelValues(class).Add(float64(n))
			if err != nil {
				// The sweep's deadline came during the batch (a driver may
				// say so as an interruption, not as the context's error).
				if ctx.Err() != nil {
					res.Partial = true
					s.sweeps.runs.WithLabelValues("partial").Inc()
					return res, nil
				}
				s.sweeps.runs.WithLabelValues("error").Inc()
				return res, err
			}
			if n == int64(batch) {
				next = append(next, class)
			}
		}
		left = next
		if len(left) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			res.Partial = true
			s.sweeps.runs.WithLabelValues("partial").Inc()
			return res, nil
		case <-time.After(max(sweepPause, 2*took)):
			// Twice the round's time: the sweeper takes at most a
			// third of the store's time from the clients.
		}
	}
	s.sweeps.runs.WithLabelValues("done").Inc()
	return res, nil
}

// RunSweeper sweeps every Retention.SweepEvery until ctx ends. Every
// instance may run it; the store's lease lets one sweep at a time.
func (s *Server) RunSweeper(ctx context.Context) {
	t := time.NewTicker(s.cfg.Retention.SweepEvery)
	defer t.Stop()
	for {
		if _, err := s.SweepOnce(ctx); err != nil && ctx.Err() == nil {
			s.storeErrors.Inc()
			s.cfg.Logger.Error("store", "route", "sweep", "err", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// MaxTaskIdle is the longest idle time a task's owner may ask for.
const MaxTaskIdle = 365 * 24 * time.Hour

// taskIdle checks a task's idleSeconds (nil: the default, 0 returned):
// from a minute to MaxTaskIdle.
func (s *Server) taskIdle(c *tcall, secs *int64) (int64, bool) {
	if secs == nil {
		return 0, true
	}
	if *secs < 60 || *secs > int64(MaxTaskIdle/time.Second) {
		s.badRequest(c.w, "idleSeconds must be between 60 and "+strconv.FormatInt(int64(MaxTaskIdle/time.Second), 10))
		return 0, false
	}
	return *secs * 1000, true
}

// pendingFromFull reports whether the client address holds its bound of
// pending delegations (fail closed when the store cannot say).
func (s *Server) pendingFromFull(ctx context.Context, client string) (bool, error) {
	return s.pendingAtBound(s.cfg.Retention.MaxPendingPerAddress, func(ms MaintenanceStore, nowMs int64) (int64, error) {
		return ms.PendingDelegationsFrom(ctx, client, nowMs)
	})
}

// pendingFull reports whether audience holds its bound of pending
// delegations (fail closed when the store cannot say).
func (s *Server) pendingFull(ctx context.Context, audience string) (bool, error) {
	return s.pendingAtBound(s.cfg.Retention.MaxPendingPerAudience, func(ms MaintenanceStore, nowMs int64) (int64, error) {
		return ms.PendingDelegations(ctx, audience, nowMs)
	})
}

// pendingAtBound reports whether the pending delegations count counts
// now have reached bound; an error is full (fail closed). A negative
// bound, or a store that does not count, bounds nothing.
func (s *Server) pendingAtBound(bound int64, count func(ms MaintenanceStore, nowMs int64) (int64, error)) (bool, error) {
	ms, ok := s.raw.(MaintenanceStore)
	if !ok || bound < 0 {
		return false, nil
	}
	n, err := count(ms, s.nowMs())
	if err != nil {
		return true, err
	}
	return n >= bound, nil
}

// SweepRateBuckets deletes the rate buckets untouched for an hour (full
// again) from st, in batches, pausing twice a batch's time between two:
// the sweep of a store that only keeps rate limits (pling gateway
// --limits-store), where no authority's sweeper runs. It returns the
// rows deleted.
func SweepRateBuckets(ctx context.Context, st MaintenanceStore, now time.Time) (int64, error) {
	var total int64
	c := SweepCutoffs{NowMs: now.UnixMilli()}
	for {
		t0 := time.Now()
		bctx, cancel := context.WithTimeout(ctx, sweepBatchTimeout)
		n, err := st.SweepBatch(bctx, "rate_buckets", c, DefaultSweepBatch)
		cancel()
		total += n
		if err != nil || n < DefaultSweepBatch {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(max(sweepPause, 2*time.Since(t0))):
		}
	}
}
