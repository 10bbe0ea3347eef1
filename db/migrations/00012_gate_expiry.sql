-- +goose Up
-- Gates that expire: a mission may give its gates a time to live
-- (gate_ttl, in seconds; 0 = never). A gate open longer is expired: it
-- still blocks, and is first in the Attention view. The clock decides it
-- at read time; the background sweep stamps expired_at once per gate
-- (guarded by expired_at IS NULL, so every replica may sweep) and records
-- the decision.expired event. A gate that was stamped stays expired until
-- a lead resolves it; expired_at stays as its history.
ALTER TABLE missions ADD COLUMN gate_ttl INTEGER NOT NULL DEFAULT 0 CHECK (gate_ttl >= 0);
ALTER TABLE decisions ADD COLUMN expired_at TEXT;

-- +goose Down
ALTER TABLE decisions DROP COLUMN expired_at;
ALTER TABLE missions DROP COLUMN gate_ttl;
