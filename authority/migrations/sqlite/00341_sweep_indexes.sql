-- +goose Up
-- The sweeper keeps a task's current lease in the lease history (its
-- NOT EXISTS on tasks.lease_id, maintenance_store.go): without an index
-- that is a scan of the tasks for each row of the history it deletes.
-- Portable SQL: the SQLite and PostgreSQL sets are the same.
CREATE INDEX tasks_lease ON tasks (lease_id);
-- +goose Down
DROP INDEX tasks_lease;
