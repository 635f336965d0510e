-- +goose Up
-- The client address that asked for a delegation (an IPv6 address by its
-- /64), so that the delegations waiting for consent are bounded per
-- address as well as per audience: a few addresses cannot fill an
-- audience's bound. Portable SQL.
ALTER TABLE delegations ADD COLUMN client TEXT NOT NULL DEFAULT '';
CREATE INDEX delegations_client ON delegations (client, expires_ms);
-- +goose Down
DROP INDEX delegations_client;
ALTER TABLE delegations DROP COLUMN client;
