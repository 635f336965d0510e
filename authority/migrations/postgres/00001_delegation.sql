-- +goose Up
-- The PostgreSQL twin of migrations/sqlite/00001_delegation.sql: the same
-- tables, columns and constraints, with PostgreSQL's types (BYTEA for
-- BLOB, an identity column for AUTOINCREMENT). Each migration has the
-- same version number in both directories.
CREATE TABLE delegations (
    id                 TEXT PRIMARY KEY,
    user_code          TEXT NOT NULL UNIQUE,
    poll_secret_digest BYTEA NOT NULL,
    audience           TEXT NOT NULL,
    scope              TEXT NOT NULL,
    agent              TEXT NOT NULL,
    ttl_ms             BIGINT NOT NULL,
    status             TEXT NOT NULL,
    approved_scope     TEXT,
    created_ms         BIGINT NOT NULL,
    expires_ms         BIGINT NOT NULL,
    last_poll_ms       BIGINT NOT NULL DEFAULT 0,
    session_id         TEXT UNIQUE
);
CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    delegation_id TEXT NOT NULL,
    token_digest  BYTEA NOT NULL,
    audience      TEXT NOT NULL,
    expires_ms    BIGINT NOT NULL,
    revoked_ms    BIGINT
);
CREATE TABLE revocations (
    cursor     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE,
    at_ms      BIGINT NOT NULL
);
CREATE TABLE signing_keys (
    kid          TEXT PRIMARY KEY,
    private_key  BYTEA NOT NULL,
    created_ms   BIGINT NOT NULL,
    retired_ms   BIGINT,
    not_after_ms BIGINT
);
-- +goose Down
DROP TABLE signing_keys;
DROP TABLE revocations;
DROP TABLE sessions;
DROP TABLE delegations;
