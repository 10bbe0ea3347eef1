-- +goose Up
-- Delivery you can prove: every brief has an id; what a brief delivers is
-- stamped with it (brief_id, last_delivered_at; delivered_at keeps the
-- first delivery), and the agent's ack of that id on its next brief stamps
-- acked_at. A delivery not acknowledged within its lease is delivered
-- again. The same columns on the four things a brief delivers: gates'
-- resolutions, leads' answers to plans, permission answers and
-- remediation requests. Deliveries made before acks existed count as
-- acknowledged.
ALTER TABLE decisions ADD COLUMN last_delivered_at TEXT;
ALTER TABLE decisions ADD COLUMN brief_id TEXT;
ALTER TABLE decisions ADD COLUMN acked_at TEXT;
UPDATE decisions SET last_delivered_at = delivered_at, acked_at = delivered_at WHERE delivered_at IS NOT NULL;
CREATE INDEX decisions_unacked ON decisions (session_id, last_delivered_at)
    WHERE resolved_at IS NOT NULL AND acked_at IS NULL;
CREATE INDEX decisions_unacked_delivered ON decisions (last_delivered_at)
    WHERE delivered_at IS NOT NULL AND acked_at IS NULL;

ALTER TABLE plans ADD COLUMN last_delivered_at TEXT;
ALTER TABLE plans ADD COLUMN brief_id TEXT;
ALTER TABLE plans ADD COLUMN acked_at TEXT;
UPDATE plans SET last_delivered_at = delivered_at, acked_at = delivered_at WHERE delivered_at IS NOT NULL;
CREATE INDEX plans_unacked ON plans (session_id, last_delivered_at)
    WHERE decided_by IS NOT NULL AND acked_at IS NULL;
CREATE INDEX plans_unacked_delivered ON plans (last_delivered_at)
    WHERE delivered_at IS NOT NULL AND acked_at IS NULL;

ALTER TABLE permission_prompts ADD COLUMN last_delivered_at TEXT;
ALTER TABLE permission_prompts ADD COLUMN brief_id TEXT;
ALTER TABLE permission_prompts ADD COLUMN acked_at TEXT;
UPDATE permission_prompts SET last_delivered_at = delivered_at, acked_at = delivered_at WHERE delivered_at IS NOT NULL;
CREATE INDEX permission_prompts_unacked ON permission_prompts (session_id, last_delivered_at)
    WHERE answered_at IS NOT NULL AND acked_at IS NULL;
CREATE INDEX permission_prompts_unacked_delivered ON permission_prompts (last_delivered_at)
    WHERE delivered_at IS NOT NULL AND acked_at IS NULL;

ALTER TABLE remediations ADD COLUMN last_delivered_at TEXT;
ALTER TABLE remediations ADD COLUMN brief_id TEXT;
ALTER TABLE remediations ADD COLUMN acked_at TEXT;
UPDATE remediations SET last_delivered_at = delivered_at, acked_at = delivered_at WHERE delivered_at IS NOT NULL;
CREATE INDEX remediations_unacked ON remediations (session_id, last_delivered_at)
    WHERE closed_at IS NULL AND acked_at IS NULL;
CREATE INDEX remediations_unacked_delivered ON remediations (last_delivered_at)
    WHERE delivered_at IS NOT NULL AND acked_at IS NULL;

-- +goose Down
DROP INDEX remediations_unacked_delivered;
DROP INDEX remediations_unacked;
ALTER TABLE remediations DROP COLUMN acked_at;
ALTER TABLE remediations DROP COLUMN brief_id;
ALTER TABLE remediations DROP COLUMN last_delivered_at;
DROP INDEX permission_prompts_unacked_delivered;
DROP INDEX permission_prompts_unacked;
ALTER TABLE permission_prompts DROP COLUMN acked_at;
ALTER TABLE permission_prompts DROP COLUMN brief_id;
ALTER TABLE permission_prompts DROP COLUMN last_delivered_at;
DROP INDEX plans_unacked_delivered;
DROP INDEX plans_unacked;
ALTER TABLE plans DROP COLUMN acked_at;
ALTER TABLE plans DROP COLUMN brief_id;
ALTER TABLE plans DROP COLUMN last_delivered_at;
DROP INDEX decisions_unacked_delivered;
DROP INDEX decisions_unacked;
ALTER TABLE decisions DROP COLUMN acked_at;
ALTER TABLE decisions DROP COLUMN brief_id;
ALTER TABLE decisions DROP COLUMN last_delivered_at;
