-- +goose Up
-- Rate limits shared by every instance of a store (ratelimit_store.go):
-- one token bucket per limited key, taken by one conditional upsert, so
-- that N instances allow what one does. Portable SQL: the SQLite and
-- PostgreSQL sets are the same.
CREATE TABLE rate_buckets (
    bucket TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    at_ms  BIGINT NOT NULL
);
CREATE INDEX rate_buckets_at ON rate_buckets (at_ms);
-- +goose Down
DROP TABLE rate_buckets;
