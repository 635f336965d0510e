package authority

import (
	"context"
	"fmt"
	"strings"
)

// MaintenanceStore is what the background sweeper (sweeper.go) needs of a
// Store beyond the Store interface: batched deletes by retention, a
// lease that lets one instance at a time sweep, and the count of pending
// delegations per audience. sqlStore implements it; a Store that does
// not is never swept.
type MaintenanceStore interface {
	// SweepBatch deletes up to limit rows of one retention class
	// (SweepClasses) that are past their retention at the cutoffs c, and
	// returns how many it deleted.
	SweepBatch(ctx context.Context, class string, c SweepCutoffs, limit int) (int64, error)
	// TryMaintenanceLease takes (or keeps) the lease named name for
	// holder for ttlMs; false when another holder has it live. On
	// PostgreSQL the lease's time is the database's clock.
	TryMaintenanceLease(ctx context.Context, name, holder string, nowMs, ttlMs int64) (bool, error)
	// PendingDelegations counts the pending, unexpired delegations of an
	// audience at nowMs.
	PendingDelegations(ctx context.Context, audience string, nowMs int64) (int64, error)
	// PendingDelegationsFrom counts the pending, unexpired delegations a
	// client address asked for at nowMs.
	PendingDelegationsFrom(ctx context.Context, client string, nowMs int64) (int64, error)
}

// SweepCutoffs are the times (Unix ms) before which each retention class
// is deleted.
type SweepCutoffs struct {
	NowMs int64
	// Expired: delegations and sessions whose expiry is at or before it.
	ExpiredMs int64
	// Revocations whose session expired at or before it leave the feed.
	RevokedMs int64
	// Tasks last written at or before it, with no live lease.
	TaskIdleMs int64
	// Lease history acquired before it that is not a task's current lease.
	LeaseHistoryMs int64
}

// SweepClasses are the retention classes in the order the sweeper runs
// them: sessions before the delegations they came from, tasks before the
// lease history they leave behind.
var SweepClasses = []string{"idempotency_keys", "requests", "revocations", "sessions", "delegations", "tasks", "task_leases", "rate_buckets", "approvals"}

// sweepSQL is each class's batched delete: a key subquery with LIMIT, so
// that one statement holds its locks for one batch only (SQLite and
// PostgreSQL both take row values and LIMIT in a subquery).
var sweepSQL = map[string]func(c SweepCutoffs) (string, []any){
	"idempotency_keys": func(c SweepCutoffs) (string, []any) {
		return `DELETE FROM idempotency_keys WHERE (owner, idem_key) IN
			(SELECT owner, idem_key FROM idempotency_keys WHERE expires_ms <= ? LIMIT ?)`, []any{c.NowMs}
	},
	"requests": func(c SweepCutoffs) (string, []any) {
		return `DELETE FROM requests WHERE (session_id, request_id) IN
			(SELECT session_id, request_id FROM requests WHERE expires_ms <= ? LIMIT ?)`, []any{c.NowMs}
	},
	"revocations": func(c SweepCutoffs) (string, []any) {
		return `DELETE FROM revocations WHERE cursor IN
			(SELECT cursor FROM revocations WHERE expires_ms <= ? LIMIT ?)`, []any{c.RevokedMs}
	},
	"sessions": func(c SweepCutoffs) (string, []any) {
		// A revoked session stays while its feed entry does.
		return `DELETE FROM sessions WHERE id IN
			(SELECT id FROM sessions WHERE expires_ms <= ? AND (revoked_ms IS NULL OR expires_ms <= ?) LIMIT ?)`,
			[]any{c.ExpiredMs, c.RevokedMs}
	},
	"delegations": func(c SweepCutoffs) (string, []any) {
		return `DELETE FROM delegations WHERE id IN
			(SELECT id FROM delegations d WHERE d.expires_ms <= ?
			 AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.delegation_id = d.id) LIMIT ?)`, []any{c.ExpiredMs}
	},
	"tasks": func(c SweepCutoffs) (string, []any) {
		// A task's own idle time (idle_ms) or the default.
		return `DELETE FROM tasks WHERE id IN
			(SELECT id FROM tasks WHERE ((idle_ms IS NULL AND updated_ms <= ?) OR (idle_ms IS NOT NULL AND updated_ms + idle_ms <= ?))
			 AND (lease_expires_ms IS NULL OR lease_expires_ms <= ?) LIMIT ?)`,
			[]any{c.TaskIdleMs, c.NowMs, c.NowMs}
	},
	"approvals": func(c SweepCutoffs) (string, []any) {
		// An expired approval can be neither decided nor collected.
		return `DELETE FROM approvals WHERE id IN
			(SELECT id FROM approvals WHERE expires_ms <= ? LIMIT ?)`, []any{c.NowMs}
	},
	"rate_buckets": func(c SweepCutoffs) (string, []any) {
		// A bucket untouched for an hour is full again (a full bucket is
		// the same as none) under any limit of the authority.
		return `DELETE FROM rate_buckets WHERE bucket IN
			(SELECT bucket FROM rate_buckets WHERE at_ms <= ? LIMIT ?)`, []any{c.NowMs - 3600_000}
	},
	"task_leases": func(c SweepCutoffs) (string, []any) {
		return `DELETE FROM task_leases WHERE lease_id IN
			(SELECT lease_id FROM task_leases l WHERE l.acquired_ms < ?
			 AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.lease_id = l.lease_id) LIMIT ?)`, []any{c.LeaseHistoryMs}
	},
}

func (s *sqlStore) SweepBatch(ctx context.Context, class string, c SweepCutoffs, limit int) (int64, error) {
	f, ok := sweepSQL[class]
	if !ok {
		return 0, fmt.Errorf("authority: no retention class %q", class)
	}
	q, args := f(c)
	if s.dialect == SQLite {
		q = sqliteByRowid(q)
	}
	r, err := s.db.ExecContext(ctx, q, append(args, limit)...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// sqliteByRowid rewrites a batched delete to pick its rows by rowid on
// SQLite: "DELETE FROM t WHERE <key> IN (SELECT <key> FROM t …" becomes
// "… WHERE rowid IN (SELECT rowid FROM t …", one b-tree lookup a row
// instead of a row-value match on the key.
func sqliteByRowid(q string) string {
	del, rest, ok := strings.Cut(q, " WHERE ")
	if !ok {
		return q
	}
	_, sub, ok := strings.Cut(rest, "(SELECT ")
	if !ok {
		return q
	}
	_, from, ok := strings.Cut(sub, " FROM ")
	if !ok {
		return q
	}
	return del + " WHERE rowid IN (SELECT rowid FROM " + from
}

func (s *sqlStore) TryMaintenanceLease(ctx context.Context, name, holder string, nowMs, ttlMs int64) (bool, error) {
	now := "?"
	args := []any{name, holder, nowMs, ttlMs, nowMs}
	if s.dialect == PostgreSQL {
		// The database's clock, so that instances' clocks never decide
		// who holds the lease.
		now = dbNowMs
		args = []any{name, holder, ttlMs}
	}
	r, err := s.db.ExecContext(ctx, `INSERT INTO maintenance_leases AS m (name, holder, expires_ms) VALUES (?, ?, `+now+` + ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
		WHERE m.expires_ms <= `+now+` OR m.holder = excluded.holder`, args...)
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// dbNowMs is PostgreSQL's clock in Unix ms (the statement's time).
const dbNowMs = `CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)`

func (s *sqlStore) PendingDelegations(ctx context.Context, audience string, nowMs int64) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM delegations WHERE audience = ? AND status = 'pending' AND expires_ms > ?`,
		audience, nowMs).Scan(&n)
	return n, err
}

func (s *sqlStore) PendingDelegationsFrom(ctx context.Context, client string, nowMs int64) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM delegations WHERE client = ? AND status = 'pending' AND expires_ms > ?`,
		client, nowMs).Scan(&n)
	return n, err
}
