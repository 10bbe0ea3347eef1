-- +goose Up
-- A lead's answer to a plan (seed 002's CONFIRMING): confirm, ask for
-- changes (status changes_requested, with an instruction) or reject, each
-- delivered once on the agent's next brief (delivered_at). And the
-- permission prompts an agent's client raised, answered by a person and
-- delivered the same way.
--
-- SQLite cannot widen a CHECK, so plans is rebuilt; no table references it.
-- Answers given before this migration count as delivered.
CREATE TABLE plans_v7 (
    id           INTEGER PRIMARY KEY,
    session_id   TEXT    NOT NULL REFERENCES sessions (id),
    summary      TEXT    NOT NULL,
    body         TEXT    NOT NULL, -- JSON {initial_steps, stopping_points} as proposed
    status       TEXT    NOT NULL
        CHECK (status IN ('proposed', 'approved', 'changes_requested', 'rejected', 'superseded')),
    proposed_at  TEXT    NOT NULL,
    decided_at   TEXT,
    decided_by   INTEGER REFERENCES users (id),
    note         TEXT    NOT NULL DEFAULT '',
    -- When the lead's answer (decided_by set) reached the agent in a brief.
    delivered_at TEXT
);
INSERT INTO plans_v7 (id, session_id, summary, body, status, proposed_at, decided_at, decided_by, note, delivered_at)
SELECT id, session_id, summary, body, status, proposed_at, decided_at, decided_by, note,
       CASE WHEN decided_by IS NOT NULL THEN decided_at END
FROM plans;
DROP TABLE plans;
ALTER TABLE plans_v7 RENAME TO plans;
CREATE INDEX plans_by_session ON plans (session_id, id);
CREATE INDEX plans_proposed ON plans (proposed_at) WHERE status = 'proposed';
CREATE INDEX plans_undelivered ON plans (session_id) WHERE decided_by IS NOT NULL AND delivered_at IS NULL;

CREATE TABLE permission_prompts (
    id           INTEGER PRIMARY KEY,
    session_id   TEXT    NOT NULL REFERENCES sessions (id),
    prompt       TEXT    NOT NULL,
    options      TEXT    NOT NULL, -- JSON object: option key -> label
    tool         TEXT    NOT NULL DEFAULT '',
    paths        TEXT    NOT NULL DEFAULT '[]', -- JSON array
    requested_at TEXT    NOT NULL,
    answer       TEXT,             -- the option key a person chose
    answered_at  TEXT,
    answered_by  INTEGER REFERENCES users (id),
    delivered_at TEXT,
    CHECK ((answer IS NULL) = (answered_at IS NULL)),
    CHECK (delivered_at IS NULL OR answered_at IS NOT NULL)
);
CREATE INDEX permission_prompts_open ON permission_prompts (session_id, id) WHERE answered_at IS NULL;
CREATE INDEX permission_prompts_waiting ON permission_prompts (requested_at) WHERE answered_at IS NULL;
CREATE INDEX permission_prompts_undelivered ON permission_prompts (session_id)
    WHERE answered_at IS NOT NULL AND delivered_at IS NULL;

-- Blocked tasks are Attention items.
CREATE INDEX tasks_blocked ON tasks (updated_at) WHERE status = 'blocked';

-- +goose Down
DROP INDEX tasks_blocked;
DROP TABLE permission_prompts;
-- The wider CHECK stays; a request for changes reads as a rejection.
UPDATE plans SET status = 'rejected' WHERE status = 'changes_requested';
DROP INDEX plans_undelivered;
ALTER TABLE plans DROP COLUMN delivered_at;
