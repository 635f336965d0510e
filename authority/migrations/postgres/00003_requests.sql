-- +goose Up
-- The PostgreSQL twin of migrations/sqlite/00003_requests.sql (the SQL is
-- portable, so it is the same). The shared replay guard (docs/authority.md "Shared replay guard"): one
-- record per (session, request id) consumed through the authority, kept
-- until the session expires. Portable SQL (no engine-specific types or
-- functions), so the PostgreSQL set can take it as it is.
CREATE TABLE requests (
    session_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    completed  INTEGER NOT NULL DEFAULT 0,
    ok         INTEGER NOT NULL DEFAULT 0,
    code       TEXT NOT NULL DEFAULT '',
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    PRIMARY KEY (session_id, request_id)
);
CREATE INDEX requests_expires ON requests (expires_ms);
-- The number of records a session holds, kept beside the session so the
-- bound is one conditional update (atomic on any engine).
ALTER TABLE sessions ADD COLUMN request_count BIGINT NOT NULL DEFAULT 0;
-- +goose Down
DROP INDEX requests_expires;
DROP TABLE requests;
ALTER TABLE sessions DROP COLUMN request_count;
