package authority

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

//go:embed migrations/sqlite/*.sql
var sqliteMigrations embed.FS

// SQLStore is what Open, OpenSQLite and OpenPostgres return: a Store
// with every optional part the authority and the gateway use (approvals,
// the sweeper's maintenance, shared rate limits), on SQLite or
// PostgreSQL. It is an interface so that the store's methods are listed
// once, by the parts they implement.
type SQLStore interface {
	Store
	ApprovalStore
	MaintenanceStore
	RateStore
	PasskeyStore
}

// sqlStore is the Store on database/sql: SQLite (OpenSQLite) or
// PostgreSQL (OpenPostgres), with the same queries, written with ?.
type sqlStore struct {
	db      pool
	dialect Dialect
	// instanceClock: lease time from the server, not PostgreSQL (dbclock.go;
	// set only by tests, export_test.go).
	instanceClock atomic.Bool
}

// OpenSQLite opens (creating) the SQLite file at path and applies the
// embedded migrations.
func OpenSQLite(ctx context.Context, path string) (SQLStore, error) {
	// The path is escaped for the file: URI: a '#' or '?' in it (a test's
	// temporary directory "…#00") would otherwise end the path there and
	// open another file.
	dsn := "file:" + strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path) + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=auto_vacuum(incremental)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	// One writer at a time is SQLite's model; one connection keeps the
	// conditional updates serial without busy retries.
	db.SetMaxOpenConns(1)
	sub, err := fs.Sub(sqliteMigrations, "migrations/sqlite")
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := migrateUp(ctx, db, goose.DialectSQLite3, sub); err != nil {
		db.Close()
		return nil, err
	}
	return &sqlStore{db: pool{db}}, nil
}

func (s *sqlStore) Ping(ctx context.Context) error { return s.db.db.PingContext(ctx) }

// ReclaimSpace gives the file back up to maxPages of the pages that
// deleted rows freed, on SQLite: a file this release creates is in
// incremental auto-vacuum mode (OpenSQLite sets it before the first
// table); a file created before that needs one VACUUM, with the
// instances stopped, to take the mode (docs/operations.md). PostgreSQL's
// autovacuum does this itself, so there it does nothing.
func (s *sqlStore) ReclaimSpace(ctx context.Context, maxPages int) error {
	if s.dialect != SQLite {
		return nil
	}
	_, err := s.db.ExecContext(ctx, "PRAGMA incremental_vacuum("+strconv.Itoa(max(maxPages, 1))+")")
	return err
}

func (s *sqlStore) Close() error { return s.db.db.Close() }

func enc(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func dec(s sql.NullString) []string {
	if !s.Valid {
		return nil
	}
	var v []string
	_ = json.Unmarshal([]byte(s.String), &v)
	return v
}

func (s *sqlStore) CreateDelegation(ctx context.Context, d Delegation) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO delegations
		(id, user_code, poll_secret_digest, audience, scope, agent, ttl_ms, status, created_ms, expires_ms, client)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.UserCode, d.PollSecretDigest, d.Audience, enc(d.Scope), d.Agent, d.TTLMs, StatusPending, d.CreatedMs, d.ExpiresMs, d.Client)
	return err
}

func (s *sqlStore) Delegation(ctx context.Context, id string) (Delegation, error) {
	return s.delegationWhere(ctx, "id", id)
}

func (s *sqlStore) DelegationByUserCode(ctx context.Context, code string) (Delegation, error) {
	return s.delegationWhere(ctx, "user_code", code)
}

// delegationWhere reads the delegation whose column col (a constant of
// this file, never input) equals v.
func (s *sqlStore) delegationWhere(ctx context.Context, col, v string) (Delegation, error) {
	var d Delegation
	var scope, approved, session sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT id, user_code, poll_secret_digest, audience, scope, agent, ttl_ms,
		status, approved_scope, subject, created_ms, expires_ms, last_poll_ms, session_id FROM delegations WHERE `+col+` = ?`, v).
		Scan(&d.ID, &d.UserCode, &d.PollSecretDigest, &d.Audience, &scope, &d.Agent, &d.TTLMs,
			&d.Status, &approved, &d.Subject, &d.CreatedMs, &d.ExpiresMs, &d.LastPollMs, &session)
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	d.Scope, d.ApprovedScope, d.SessionID = dec(scope), dec(approved), session.String
	return d, err
}

func (s *sqlStore) Decide(ctx context.Context, id, status string, scope []string, subject string, nowMs int64) error {
	r, err := s.db.ExecContext(ctx, `UPDATE delegations SET status = ?, approved_scope = ?, subject = ?
		WHERE id = ? AND status = 'pending' AND expires_ms > ?`, status, enc(scope), subject, id, nowMs)
	return oneRow(r, err)
}

func (s *sqlStore) Poll(ctx context.Context, id string, nowMs int64) (int64, error) {
	tx, ctx, err := s.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var prev int64
	err = tx.QueryRowContext(ctx, `SELECT last_poll_ms FROM delegations WHERE id = ?`+s.forUpdate(), id).Scan(&prev)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	} else if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE delegations SET last_poll_ms = ? WHERE id = ?`, nowMs, id); err != nil {
		return 0, err
	}
	return prev, tx.Commit()
}

func (s *sqlStore) Collect(ctx context.Context, id string, se Session) error {
	tx, ctx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	r, err := tx.ExecContext(ctx, `UPDATE delegations SET session_id = ?
		WHERE id = ? AND status = 'approved' AND session_id IS NULL`, se.ID, id)
	if err := oneRow(r, err); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, delegation_id, token_digest, audience, expires_ms)
		VALUES (?, ?, ?, ?, ?)`, se.ID, id, se.TokenDigest, se.Audience, se.ExpiresMs); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *sqlStore) Session(ctx context.Context, id string) (Session, error) {
	var se Session
	var rev sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT id, delegation_id, token_digest, audience, expires_ms, revoked_ms
		FROM sessions WHERE id = ?`, id).Scan(&se.ID, &se.DelegationID, &se.TokenDigest, &se.Audience, &se.ExpiresMs, &rev)
	if errors.Is(err, sql.ErrNoRows) {
		return se, ErrNotFound
	}
	se.RevokedMs = rev.Int64
	return se, err
}

func (s *sqlStore) Revoke(ctx context.Context, sessionID string, nowMs int64) error {
	tx, ctx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	r, err := tx.ExecContext(ctx, `UPDATE sessions SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL`, nowMs, sessionID)
	if err := oneRow(r, err); errors.Is(err, ErrConflict) {
		return nil // revoked already (or unknown: the caller looked it up)
	} else if err != nil {
		return err
	}
	if s.dialect == PostgreSQL {
		// Cursors must become visible in order, or a reader past cursor
		// n+1 never sees a slower n: one appender at a time, until commit.
		// Readers are not blocked.
		if _, err := tx.ExecContext(ctx, `LOCK TABLE revocations IN EXCLUSIVE MODE`); err != nil {
			return err
		}
	}
	// The entry keeps its session's expiry: it leaves the feed once no
	// token of the session can be live (sweeper.go).
	if _, err := tx.ExecContext(ctx, `INSERT INTO revocations (session_id, at_ms, expires_ms)
		SELECT id, ?, expires_ms FROM sessions WHERE id = ?`, nowMs, sessionID); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *sqlStore) Revocations(ctx context.Context, after, liveFromMs int64, limit int) ([]Revocation, int64, error) {
	// The head is read first and bounds the page: every cursor up to it
	// is visible already (appends are serial, Revoke), so a page that is
	// not full has seen everything up to the head.
	var head int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(cursor), 0) FROM revocations`).Scan(&head); err != nil {
		return nil, after, err
	}
	if head <= after {
		return nil, after, nil
	}
	list, err := queryAll(ctx, s.db, func(rows *sql.Rows) (r Revocation, err error) {
		var exp sql.NullInt64
		err = rows.Scan(&r.Cursor, &r.SessionID, &r.AtMs, &exp)
		r.ExpiresMs = exp.Int64
		return r, err
	}, `SELECT cursor, session_id, at_ms, expires_ms FROM revocations
		WHERE cursor > ? AND cursor <= ? AND (expires_ms IS NULL OR expires_ms > ?) ORDER BY cursor LIMIT ?`,
		after, head, liveFromMs, limit)
	if err != nil {
		return nil, after, err
	}
	if len(list) == limit {
		return list, list[len(list)-1].Cursor, nil
	}
	return list, head, nil
}

// queryAll runs query and reads each of its rows with scan.
func queryAll[T any](ctx context.Context, q queryer, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (s *sqlStore) AddKey(ctx context.Context, k SigningKey) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO signing_keys (kid, private_key, created_ms) VALUES (?, ?, ?)`,
		k.Kid, k.PrivateKey, k.CreatedMs)
	return err
}

func (s *sqlStore) RetireKeys(ctx context.Context, nowMs, notAfterMs int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE signing_keys SET retired_ms = ?, not_after_ms = ? WHERE retired_ms IS NULL`,
		nowMs, notAfterMs)
	return err
}

func (s *sqlStore) RotateKey(ctx context.Context, nowMs, notAfterMs int64, k SigningKey) error {
	tx, ctx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET retired_ms = ?, not_after_ms = ? WHERE retired_ms IS NULL`,
		nowMs, notAfterMs); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO signing_keys (kid, private_key, created_ms) VALUES (?, ?, ?)`,
		k.Kid, k.PrivateKey, k.CreatedMs); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *sqlStore) SetKeyMaterial(ctx context.Context, kid string, material []byte) error {
	r, err := s.db.ExecContext(ctx, `UPDATE signing_keys SET private_key = ? WHERE kid = ?`, material, kid)
	return oneRow(r, err)
}

func (s *sqlStore) Keys(ctx context.Context, nowMs int64) ([]SigningKey, error) {
	return queryAll(ctx, s.db, func(rows *sql.Rows) (k SigningKey, err error) {
		var ret, na sql.NullInt64
		err = rows.Scan(&k.Kid, &k.PrivateKey, &k.CreatedMs, &ret, &na)
		k.RetiredMs, k.NotAfterMs = ret.Int64, na.Int64
		return k, err
	}, `SELECT kid, private_key, created_ms, retired_ms, not_after_ms FROM signing_keys
		WHERE not_after_ms IS NULL OR not_after_ms > ? ORDER BY created_ms DESC, kid DESC`, nowMs)
}

// forUpdate locks the selected row for the transaction on PostgreSQL
// (SQLite's immediate transactions hold the database already).
func (s *sqlStore) forUpdate() string {
	if s.dialect == PostgreSQL {
		return " FOR UPDATE"
	}
	return ""
}

func oneRow(r sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return ErrConflict
	}
	return nil
}

func (s *sqlStore) ConsumeRequest(ctx context.Context, r RequestRecord, maxPerSession int64) (bool, RequestRecord, error) {
	tx, ctx, err := s.begin(ctx)
	if err != nil {
		return false, RequestRecord{}, err
	}
	defer tx.Rollback()
	// Insert-once: the primary key decides between concurrent calls on
	// any engine; the loser reads the winner's record.
	res, err := tx.ExecContext(ctx, `INSERT INTO requests (session_id, request_id, created_ms, expires_ms)
		VALUES (?, ?, ?, ?) ON CONFLICT (session_id, request_id) DO NOTHING`,
		r.SessionID, r.RequestID, r.CreatedMs, r.ExpiresMs)
	if err != nil {
		return false, RequestRecord{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, RequestRecord{}, err
	}
	if n == 0 {
		prev := RequestRecord{SessionID: r.SessionID, RequestID: r.RequestID}
		var completed, ok int64
		err := tx.QueryRowContext(ctx, `SELECT completed, ok, code, expires_ms FROM requests
			WHERE session_id = ? AND request_id = ?`, r.SessionID, r.RequestID).Scan(&completed, &ok, &prev.Code, &prev.ExpiresMs)
		prev.Completed, prev.OK = completed != 0, ok != 0
		return false, prev, err
	}
	cnt, err := tx.ExecContext(ctx, `UPDATE sessions SET request_count = request_count + 1
		WHERE id = ? AND request_count < ?`, r.SessionID, maxPerSession)
	if err := oneRow(cnt, err); errors.Is(err, ErrConflict) {
		return false, RequestRecord{}, ErrFull // the insert rolls back
	} else if err != nil {
		return false, RequestRecord{}, err
	}
	return true, RequestRecord{}, tx.Commit()
}

func (s *sqlStore) CompleteRequest(ctx context.Context, sessionID, requestID string, ok bool, code string) error {
	okv := 0
	if ok {
		okv = 1
	}
	r, err := s.db.ExecContext(ctx, `UPDATE requests SET completed = 1, ok = ?, code = ?
		WHERE session_id = ? AND request_id = ? AND completed = 0`, okv, code, sessionID, requestID)
	if err := oneRow(r, err); !errors.Is(err, ErrConflict) {
		return err
	}
	var one int
	err = s.db.QueryRowContext(ctx, `SELECT 1 FROM requests WHERE session_id = ? AND request_id = ?`, sessionID, requestID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	} else if err != nil {
		return err
	}
	return ErrConflict
}

func (s *sqlStore) DeleteExpiredRequests(ctx context.Context, nowMs int64) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM requests WHERE expires_ms <= ?`, nowMs)
	return err
}
