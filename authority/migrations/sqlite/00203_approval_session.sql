-- +goose Up
-- An approval is asked by a delegated session (POST /v1/approvals with
-- its token): the session it belongs to, so that one session holds a
-- bounded number, and an index the count and the sweeper use
-- (docs/operations.md "Retention"). Portable SQL.
ALTER TABLE approvals ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
CREATE INDEX approvals_session ON approvals (session_id, expires_ms);
-- +goose Down
DROP INDEX approvals_session;
ALTER TABLE approvals DROP COLUMN session_id;
