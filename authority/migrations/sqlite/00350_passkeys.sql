-- +goose Up
-- Passkeys (docs/authority.md "Passkeys"): the public keys of the
-- credentials a person registered on the authority's screen, by subject;
-- the approvals a site requires them for keep the assertion that decided
-- them, which the authority verifies again before it signs. mac is an
-- HMAC of the row under a key derived from the KEK (empty without one),
-- so a row written straight into the database is never used. Portable
-- SQL: the SQLite and PostgreSQL sets differ only in the binary type.
CREATE TABLE passkeys (
    id         BLOB PRIMARY KEY,
    subject    TEXT NOT NULL,
    credential TEXT NOT NULL,
    sign_count BIGINT NOT NULL,
    mac        BLOB NOT NULL,
    created_ms BIGINT NOT NULL,
    used_ms    BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX passkeys_subject ON passkeys (subject);
ALTER TABLE approvals ADD COLUMN passkey TEXT NOT NULL DEFAULT '';
-- +goose Down
ALTER TABLE approvals DROP COLUMN passkey;
DROP INDEX passkeys_subject;
DROP TABLE passkeys;
