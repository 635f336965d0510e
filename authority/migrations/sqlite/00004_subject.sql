-- +goose Up
-- The person who consented (docs/authority.md "Subject"): the operator's
-- approve names them, and the token's subject is this, never the agent's
-- self-chosen name. A delegation decided before this column existed has
-- none and can no longer be collected (the token endpoint refuses it).
ALTER TABLE delegations ADD COLUMN subject TEXT NOT NULL DEFAULT '';
-- +goose Down
ALTER TABLE delegations DROP COLUMN subject;
