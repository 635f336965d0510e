-- +goose Up
-- A task's own idle time (POST /v1/tasks idleSeconds): the sweeper
-- deletes a task nobody wrote for that long; NULL takes the server's
-- default (docs/operations.md "Retention"). Portable SQL.
ALTER TABLE tasks ADD COLUMN idle_ms BIGINT;
-- +goose Down
ALTER TABLE tasks DROP COLUMN idle_ms;
