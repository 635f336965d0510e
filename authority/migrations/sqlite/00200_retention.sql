-- +goose Up
-- Retention (docs/operations.md "Retention"): the background sweeper
-- deletes expired rows in batches, so each table it sweeps has an index
-- on the column it sweeps by; a revocation keeps its session's expiry so
-- that it leaves the feed once no token of that session can be live; one
-- row per maintenance job is its lease, so that one instance at a time
-- sweeps. Portable SQL: the SQLite and PostgreSQL sets are the same.
ALTER TABLE revocations ADD COLUMN expires_ms BIGINT;
UPDATE revocations SET expires_ms = (SELECT expires_ms FROM sessions WHERE sessions.id = revocations.session_id);
CREATE INDEX revocations_expires ON revocations (expires_ms);
CREATE INDEX sessions_expires ON sessions (expires_ms);
CREATE INDEX delegations_expires ON delegations (expires_ms);
CREATE INDEX delegations_pending ON delegations (audience, status, expires_ms);
CREATE INDEX tasks_updated ON tasks (updated_ms);
CREATE TABLE maintenance_leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_ms BIGINT NOT NULL
);
-- +goose Down
DROP TABLE maintenance_leases;
DROP INDEX tasks_updated;
DROP INDEX delegations_pending;
DROP INDEX delegations_expires;
DROP INDEX sessions_expires;
DROP INDEX revocations_expires;
ALTER TABLE revocations DROP COLUMN expires_ms;
