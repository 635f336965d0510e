-- +goose Up
-- Approvals given outside the page (docs/authority.md "Approvals"): a
-- page's challenge (its binding digest and what the person is shown),
-- decided once by the operator's screen, its signed approval collected
-- once with the poll secret. Numbered from 100 so that other sets of
-- migrations keep the low numbers. Portable SQL, the same on both stores.
CREATE TABLE approvals (
    id                 TEXT PRIMARY KEY,
    poll_secret_digest BYTEA NOT NULL,
    audience           TEXT NOT NULL,
    binding            TEXT NOT NULL,
    challenge          TEXT NOT NULL,
    status             TEXT NOT NULL,
    created_ms         BIGINT NOT NULL,
    expires_ms         BIGINT NOT NULL,
    collected          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX approvals_expires ON approvals (expires_ms);
-- +goose Down
DROP INDEX approvals_expires;
DROP TABLE approvals;
