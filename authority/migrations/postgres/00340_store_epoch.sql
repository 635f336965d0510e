-- +goose Up
-- The store's epoch (restore.go): a name for this store's history that
-- a restore changes, so that a follower of the revocation feed notices
-- that the feed's cursors started again and re-reads it. The row is made
-- by the first instance that reads it. Portable SQL: the SQLite and
-- PostgreSQL sets are the same.
CREATE TABLE store_meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- +goose Down
DROP TABLE store_meta;
