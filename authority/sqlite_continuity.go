package authority

import (
	"context"
	"database/sql"
	"errors"
)

// The continuity part of sqlStore. Portable SQL (placeholders '?',
// integer ms times, JSON as TEXT, ON CONFLICT … DO NOTHING): each write is
// one transaction in which the idempotency key is claimed first, then the
// write is one conditional statement, then the answer is stored.

// write runs fn in a transaction with idem's record.
func (s *sqlStore) write(ctx context.Context, idem *Idempotency, fn func(ctx context.Context, tx queryer) (any, error)) (any, error) {
	tx, ctx, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if idem != nil {
		// An expired record frees its key.
		if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE owner = ? AND idem_key = ? AND expires_ms <= ?`,
			idem.Owner, idem.Key, idem.CreatedMs); err != nil {
			return nil, err
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (owner, idem_key, digest, status, body, created_ms, expires_ms)
			VALUES (?, ?, ?, 0, '', ?, ?) ON CONFLICT (owner, idem_key) DO NOTHING`,
			idem.Owner, idem.Key, idem.Digest, idem.CreatedMs, idem.ExpiresMs)
		if err != nil {
			return nil, err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			rp := &Replayed{}
			var body string
			if err := tx.QueryRowContext(ctx, `SELECT digest, status, body FROM idempotency_keys WHERE owner = ? AND idem_key = ?`,
				idem.Owner, idem.Key).Scan(&rp.Digest, &rp.Status, &body); err != nil {
				return nil, err
			}
			rp.Body = []byte(body)
			return nil, rp
		}
	}
	res, err := fn(ctx, tx)
	if err != nil {
		return nil, err
	}
	if idem != nil {
		status, body := idem.Answer(res)
		if _, err := tx.ExecContext(ctx, `UPDATE idempotency_keys SET status = ?, body = ? WHERE owner = ? AND idem_key = ?`,
			status, string(body), idem.Owner, idem.Key); err != nil {
			return nil, err
		}
	}
	return res, tx.Commit()
}

func loadTask(ctx context.Context, q queryer, id string) (Task, error) {
	var t Task
	var state string
	var lid, lholder sql.NullString
	var lexp sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT id, owner, revision, state, created_ms, updated_ms, lease_id, lease_holder, lease_expires_ms
		FROM tasks WHERE id = ?`, id).Scan(&t.ID, &t.Owner, &t.Revision, &state, &t.CreatedMs, &t.UpdatedMs, &lid, &lholder, &lexp)
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	t.State, t.LeaseID, t.LeaseHolder, t.LeaseExpiresMs = []byte(state), lid.String, lholder.String, lexp.Int64
	return t, err
}

// ownedWrite is one write on the task taskID that owner owns: the lease
// clock is read (dbclock.go), then fn runs in write's transaction with the
// task as it stands and that time.
func ownedWrite[T any](ctx context.Context, s *sqlStore, idem *Idempotency, taskID, owner string, nowMs int64,
	fn func(ctx context.Context, tx queryer, t Task, nowMs int64) (T, error)) (T, error) {
	var zero T
	nowMs, err := s.leaseNow(ctx, nowMs)
	if err != nil {
		return zero, err
	}
	res, err := s.write(ctx, idem, func(ctx context.Context, tx queryer) (any, error) {
		t, err := ownTask(ctx, tx, taskID, owner)
		if err != nil {
			return nil, err
		}
		v, err := fn(ctx, tx, t, nowMs)
		if err != nil {
			return nil, err
		}
		return v, nil
	})
	if err != nil {
		return zero, err
	}
	return res.(T), nil
}

// ownTask loads a task of owner.
func ownTask(ctx context.Context, q queryer, id, owner string) (Task, error) {
	t, err := loadTask(ctx, q, id)
	if err == nil && t.Owner != owner {
		return t, ErrOwnerMismatch
	}
	return t, err
}

// leaseFailure says why leaseID is not the task's live lease: revoked by
// the owner, or expired (lapsed, released, superseded or unknown).
func leaseFailure(ctx context.Context, q queryer, taskID, leaseID string) error {
	var ended sql.NullString
	err := q.QueryRowContext(ctx, `SELECT ended FROM task_leases WHERE lease_id = ? AND task_id = ?`, leaseID, taskID).Scan(&ended)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrLeaseExpired
	case err != nil:
		return err
	case ended.String == "revoked":
		return ErrLeaseRevoked
	}
	return ErrLeaseExpired
}

func (s *sqlStore) CreateTask(ctx context.Context, t Task, idem *Idempotency) (Task, error) {
	res, err := s.write(ctx, idem, func(ctx context.Context, tx queryer) (any, error) {
		idle := sql.NullInt64{Int64: t.IdleMs, Valid: t.IdleMs > 0}
		r, err := tx.ExecContext(ctx, `INSERT INTO tasks (id, owner, revision, state, created_ms, updated_ms, idle_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, t.ID, t.Owner, t.Revision, string(t.State), t.CreatedMs, t.UpdatedMs, idle)
		if err := oneRow(r, err); errors.Is(err, ErrConflict) {
			return nil, ErrTaskExists
		} else if err != nil {
			return nil, err
		}
		return t, nil
	})
	if err != nil {
		return Task{}, err
	}
	return res.(Task), nil
}

func (s *sqlStore) Task(ctx context.Context, id string) (Task, error) { return loadTask(ctx, s.db, id) }

func (s *sqlStore) AcquireLease(ctx context.Context, l LeaseRequest, idem *Idempotency) (Lease, error) {
	return ownedWrite(ctx, s, idem, l.TaskID, l.Owner, l.NowMs, func(ctx context.Context, tx queryer, t Task, nowMs int64) (Lease, error) {
		l.NowMs = nowMs
		if isTerminal(t.State) {
			return Lease{}, ErrInvalidState
		}
		if t.LeaseID != "" && t.LeaseHolder == l.Holder && l.NowMs < t.LeaseExpiresMs {
			return Lease{ID: t.LeaseID, Holder: t.LeaseHolder, ExpiresMs: t.LeaseExpiresMs}, nil
		}
		exp := l.NowMs + l.TTLMs
		// The one statement that decides who holds the lease.
		r, err := tx.ExecContext(ctx, `UPDATE tasks SET lease_id = ?, lease_holder = ?, lease_expires_ms = ?
			WHERE id = ? AND owner = ? AND (lease_id IS NULL OR lease_expires_ms <= ?)`,
			l.LeaseID, l.Holder, exp, l.TaskID, l.Owner, l.NowMs-l.SkewMs)
		if err := oneRow(r, err); errors.Is(err, ErrConflict) {
			if t, err = loadTask(ctx, tx, l.TaskID); err != nil {
				return Lease{}, err
			}
			return Lease{}, &LeaseHeldError{RetryAfterMs: max(1, t.LeaseExpiresMs+l.SkewMs-l.NowMs)}
		} else if err != nil {
			return Lease{}, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_leases (lease_id, task_id, holder, ttl_ms, acquired_ms) VALUES (?, ?, ?, ?, ?)`,
			l.LeaseID, l.TaskID, l.Holder, l.TTLMs, l.NowMs); err != nil {
			return Lease{}, err
		}
		return Lease{ID: l.LeaseID, Holder: l.Holder, ExpiresMs: exp}, nil
	})
}

func (s *sqlStore) RenewLease(ctx context.Context, taskID, owner, leaseID string, ttlMs, nowMs int64, idem *Idempotency) (Lease, error) {
	return ownedWrite(ctx, s, idem, taskID, owner, nowMs, func(ctx context.Context, tx queryer, t Task, nowMs int64) (Lease, error) {
		if t.LeaseID != leaseID || nowMs >= t.LeaseExpiresMs {
			return Lease{}, leaseFailure(ctx, tx, taskID, leaseID)
		}
		if ttlMs <= 0 {
			if err := tx.QueryRowContext(ctx, `SELECT ttl_ms FROM task_leases WHERE lease_id = ?`, leaseID).Scan(&ttlMs); err != nil {
				return Lease{}, err
			}
		}
		exp := nowMs + ttlMs
		r, err := tx.ExecContext(ctx, `UPDATE tasks SET lease_expires_ms = ? WHERE id = ? AND lease_id = ? AND lease_expires_ms > ?`,
			exp, taskID, leaseID, nowMs)
		if err := oneRow(r, err); errors.Is(err, ErrConflict) {
			return Lease{}, leaseFailure(ctx, tx, taskID, leaseID)
		} else if err != nil {
			return Lease{}, err
		}
		return Lease{ID: leaseID, Holder: t.LeaseHolder, ExpiresMs: exp}, nil
	})
}

// endLease clears the task's lease leaseID if it is live at nowMs and
// marks it ended.
func endLease(ctx context.Context, tx queryer, taskID, leaseID, how string, nowMs int64) error {
	r, err := tx.ExecContext(ctx, `UPDATE tasks SET lease_id = NULL, lease_holder = NULL, lease_expires_ms = NULL
		WHERE id = ? AND lease_id = ? AND lease_expires_ms > ?`, taskID, leaseID, nowMs)
	if err := oneRow(r, err); errors.Is(err, ErrConflict) {
		return leaseFailure(ctx, tx, taskID, leaseID)
	} else if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE task_leases SET ended = ? WHERE lease_id = ?`, how, leaseID)
	return err
}

func (s *sqlStore) ReleaseLease(ctx context.Context, taskID, owner, leaseID string, nowMs int64, idem *Idempotency) (Lease, error) {
	return ownedWrite(ctx, s, idem, taskID, owner, nowMs, func(ctx context.Context, tx queryer, t Task, nowMs int64) (Lease, error) {
		if err := endLease(ctx, tx, taskID, leaseID, "released", nowMs); err != nil {
			return Lease{}, err
		}
		return Lease{ID: leaseID, Holder: t.LeaseHolder, ExpiresMs: nowMs}, nil
	})
}

func (s *sqlStore) RevokeLease(ctx context.Context, taskID, owner string, nowMs int64, idem *Idempotency) (Lease, error) {
	return ownedWrite(ctx, s, idem, taskID, owner, nowMs, func(ctx context.Context, tx queryer, t Task, nowMs int64) (Lease, error) {
		if t.LeaseID == "" || nowMs >= t.LeaseExpiresMs {
			return Lease{}, ErrLeaseExpired
		}
		if err := endLease(ctx, tx, taskID, t.LeaseID, "revoked", nowMs); err != nil {
			return Lease{}, err
		}
		return Lease{ID: t.LeaseID, Holder: t.LeaseHolder, ExpiresMs: nowMs}, nil
	})
}

func (s *sqlStore) UpdateTask(ctx context.Context, u UpdateRequest, idem *Idempotency) (int64, error) {
	return ownedWrite(ctx, s, idem, u.TaskID, u.Owner, u.NowMs, func(ctx context.Context, tx queryer, t Task, nowMs int64) (int64, error) {
		u.NowMs = nowMs
		if isTerminal(t.State) {
			return 0, ErrInvalidState
		}
		if t.LeaseID != u.LeaseID || u.NowMs >= t.LeaseExpiresMs {
			return 0, leaseFailure(ctx, tx, u.TaskID, u.LeaseID)
		}
		if t.Revision != u.IfRevision {
			return 0, ErrRevisionConflict
		}
		// The statement re-checks what was read: on a store where another
		// transaction may have written in between, it is the guard.
		r, err := tx.ExecContext(ctx, `UPDATE tasks SET revision = revision + 1, state = ?, updated_ms = ?
			WHERE id = ? AND revision = ? AND lease_id = ? AND lease_expires_ms > ?`,
			string(u.State), u.NowMs, u.TaskID, u.IfRevision, u.LeaseID, u.NowMs)
		if err := oneRow(r, err); errors.Is(err, ErrConflict) {
			return 0, ErrRevisionConflict
		} else if err != nil {
			return 0, err
		}
		return u.IfRevision + 1, nil
	})
}

func (s *sqlStore) SweepContinuity(ctx context.Context, nowMs, leasesBeforeMs int64) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE expires_ms <= ?`, nowMs); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `DELETE FROM task_leases WHERE acquired_ms < ?
		AND lease_id NOT IN (SELECT lease_id FROM tasks WHERE lease_id IS NOT NULL)`, leasesBeforeMs)
	return err
}
