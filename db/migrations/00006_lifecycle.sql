-- +goose Up
-- The agent lifecycle (seed 002): a session's state is one of twelve,
-- moved by the events its agent reports; tasks are counted per session.
--
-- SQLite cannot add a CHECK to an existing column. Rebuilding sessions
-- would mean copying a table nine others reference by foreign key (and
-- turning foreign keys off, which cannot be done inside goose's
-- transaction), so triggers refuse any other state on INSERT and UPDATE
-- instead. Sessions created before this migration are all IDLE; anything
-- else is made IDLE first so existing data stays valid.
UPDATE sessions SET lifecycle = 'IDLE'
WHERE lifecycle NOT IN ('IDLE', 'CLASSIFYING', 'ANSWERING', 'DELEGATING', 'SCHEDULING', 'ARCHITECTURE_DESIGNING',
    'CONFIRMING', 'EXECUTING', 'INTERRUPTING', 'ARCHITECTURE_REVISING', 'SUMMARIZING', 'DIRECT_MODE');

-- +goose StatementBegin
CREATE TRIGGER sessions_lifecycle_insert BEFORE INSERT ON sessions
WHEN NEW.lifecycle NOT IN ('IDLE', 'CLASSIFYING', 'ANSWERING', 'DELEGATING', 'SCHEDULING', 'ARCHITECTURE_DESIGNING',
    'CONFIRMING', 'EXECUTING', 'INTERRUPTING', 'ARCHITECTURE_REVISING', 'SUMMARIZING', 'DIRECT_MODE')
BEGIN
    SELECT RAISE(ABORT, 'sessions.lifecycle must be one of the twelve lifecycle states');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER sessions_lifecycle_update BEFORE UPDATE OF lifecycle ON sessions
WHEN NEW.lifecycle NOT IN ('IDLE', 'CLASSIFYING', 'ANSWERING', 'DELEGATING', 'SCHEDULING', 'ARCHITECTURE_DESIGNING',
    'CONFIRMING', 'EXECUTING', 'INTERRUPTING', 'ARCHITECTURE_REVISING', 'SUMMARIZING', 'DIRECT_MODE')
BEGIN
    SELECT RAISE(ABORT, 'sessions.lifecycle must be one of the twelve lifecycle states');
END;
-- +goose StatementEnd

-- When the agent last moved the session; NULL: it never reported a
-- lifecycle event (untracked: the lifecycle gates nothing).
ALTER TABLE sessions ADD COLUMN lifecycle_at TEXT;

-- The tasks a session's agent reported (task.created, …), by the agent's id.
CREATE TABLE tasks (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    task       TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('created', 'progress', 'completed', 'failed', 'blocked')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, task)
);

-- Who ran a tool call: the main agent in DIRECT_MODE, an executor otherwise.
ALTER TABLE tool_calls ADD COLUMN source_kind TEXT NOT NULL DEFAULT 'executor'
    CHECK (source_kind IN ('main', 'executor'));

-- +goose Down
ALTER TABLE tool_calls DROP COLUMN source_kind;
DROP TABLE tasks;
ALTER TABLE sessions DROP COLUMN lifecycle_at;
DROP TRIGGER sessions_lifecycle_update;
DROP TRIGGER sessions_lifecycle_insert;
