// Restore: ending the past of a store restored from a backup, and the store's epoch the revocation feed carries.

package authority

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"errors"
	"sync"
	"time"
)

// A restored store has forgotten what happened after its backup: the
// sessions issued since (their tokens verify under the same key, yet the
// store does not know them) and the revocations made since (those
// sessions are live again in the copy). No follower can tell either from
// a token, so a restore ends everything signed before it: every signing
// key stops being published at once (not when its last token expires, as
// a rotation does), a new key signs from then on, every session of the
// copy is marked revoked and every delegation not collected ends. The
// epoch changes too, so that a follower that kept running notices that
// the feed's cursors started again from the backup's, re-reads the feed
// and fetches the keys again (RATIONALE.md "Why does a restore end every
// token?").

// RestoreResult is what Restored changed.
type RestoreResult struct {
	Epoch string
	// Kid is the new signing key's.
	Kid string
	// KeysRetired, SessionsEnded and DelegationsEnded count the rows
	// the restore ended.
	KeysRetired, SessionsEnded, DelegationsEnded int64
}

// Restore ends the past of st, a store just restored from a backup
// (pling authority restore): see Store.Restored. The new signing key is
// sealed under kek (nil: stored plain); the keys of the backup need not
// open, since none of them is published again.
func Restore(ctx context.Context, st Store, kek []byte, now time.Time) (RestoreResult, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return RestoreResult{}, err
	}
	nowMs := now.UnixMilli()
	return newSealedStore(st, kek, nil).Restored(ctx, nowMs, "e"+randomID(12),
		SigningKey{Kid: "k" + randomID(9), PrivateKey: priv, CreatedMs: nowMs})
}

func (s *sealedStore) Restored(ctx context.Context, nowMs int64, epoch string, k SigningKey) (RestoreResult, error) {
	k, err := s.wrap(k)
	if err != nil {
		return RestoreResult{}, err
	}
	return s.Store.Restored(ctx, nowMs, epoch, k)
}

const epochName = "epoch"

func (s *sqlStore) Epoch(ctx context.Context) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM store_meta WHERE name = ?`, epochName).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	// The first reader names the epoch; of instances racing, one wins.
	if _, err := s.db.ExecContext(ctx, `INSERT INTO store_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
		epochName, "e"+randomID(12)); err != nil {
		return "", err
	}
	err = s.db.QueryRowContext(ctx, `SELECT value FROM store_meta WHERE name = ?`, epochName).Scan(&v)
	return v, err
}

func (s *sqlStore) Restored(ctx context.Context, nowMs int64, epoch string, k SigningKey) (RestoreResult, error) {
	res := RestoreResult{Epoch: epoch, Kid: k.Kid}
	tx, ctx, err := s.begin(ctx)
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	var ignored int64
	steps := []struct {
		n    *int64
		q    string
		args []any
	}{
		// Unpublished now: not_after_ms is when Keys stops listing a key.
		{&res.KeysRetired, `UPDATE signing_keys SET retired_ms = COALESCE(retired_ms, ?), not_after_ms = ?
			WHERE not_after_ms IS NULL OR not_after_ms > ?`, []any{nowMs, nowMs, nowMs}},
		{&ignored, `INSERT INTO signing_keys (kid, private_key, created_ms) VALUES (?, ?, ?)`, []any{k.Kid, k.PrivateKey, k.CreatedMs}},
		{&res.SessionsEnded, `UPDATE sessions SET revoked_ms = ? WHERE revoked_ms IS NULL AND expires_ms > ?`, []any{nowMs, nowMs}},
		{&res.DelegationsEnded, `UPDATE delegations SET expires_ms = ? WHERE session_id IS NULL AND expires_ms > ?`, []any{nowMs, nowMs}},
		{&ignored, `INSERT INTO store_meta (name, value) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, []any{epochName, epoch}},
	}
	for _, st := range steps {
		r, err := tx.ExecContext(ctx, st.q, st.args...)
		if err != nil {
			return res, err
		}
		if *st.n, err = r.RowsAffected(); err != nil {
			return res, err
		}
	}
	return res, tx.Commit()
}

// epochCache is the store's epoch as the feed serves it, read again at
// most once a second, so that a restore into the store the instance
// uses is seen within a second without a query per parked poll.
type epochCache struct {
	mu    sync.Mutex
	value string
	at    time.Time
}

const epochTTL = time.Second

func (s *Server) epoch(ctx context.Context) (string, error) {
	c := &s.epochC
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.value != "" && time.Since(c.at) < epochTTL {
		return c.value, nil
	}
	v, err := s.cfg.Store.Epoch(ctx)
	if err != nil {
		return "", err
	}
	c.value, c.at = v, time.Now()
	return v, nil
}
