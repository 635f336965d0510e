-- +goose Up
-- The PostgreSQL twin of migrations/sqlite/00002_continuity.sql: the same
-- tables, columns and constraints, with PostgreSQL's types (BYTEA for
-- BLOB). Tasks, the leases handed out, and the answers remembered for
-- Idempotency-Key retries (docs/authority.md "Continuity").
CREATE TABLE tasks (
    id               TEXT PRIMARY KEY,
    owner            TEXT NOT NULL,
    revision         BIGINT NOT NULL,
    state            TEXT NOT NULL,
    created_ms       BIGINT NOT NULL,
    updated_ms       BIGINT NOT NULL,
    lease_id         TEXT,
    lease_holder     TEXT,
    lease_expires_ms BIGINT
);
CREATE TABLE task_leases (
    lease_id    TEXT PRIMARY KEY,
    task_id     TEXT NOT NULL,
    holder      TEXT NOT NULL,
    ttl_ms      BIGINT NOT NULL,
    acquired_ms BIGINT NOT NULL,
    ended       TEXT
);
CREATE INDEX task_leases_acquired ON task_leases (acquired_ms);
CREATE TABLE idempotency_keys (
    owner      TEXT NOT NULL,
    idem_key   TEXT NOT NULL,
    digest     BYTEA NOT NULL,
    status     INTEGER NOT NULL,
    body       TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    PRIMARY KEY (owner, idem_key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_ms);
-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE task_leases;
DROP TABLE tasks;
