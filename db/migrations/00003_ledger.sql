-- +goose Up
-- The run ledger: runs, the questions they wait on, and the
-- tool calls they make.
CREATE TABLE runs (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    -- Runs started by answering a menu are grouped under the run that asked,
    -- by this explicit id, never by a time window.
    parent_id  TEXT REFERENCES runs (id),
    name       TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('running', 'parked', 'complete', 'partial', 'blocked', 'failed', 'cancelled')),
    started_at TEXT NOT NULL,
    ended_at   TEXT
);
CREATE INDEX runs_by_session ON runs (session_id, started_at);
CREATE INDEX runs_by_parent ON runs (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX runs_terminal ON runs (id) WHERE status NOT IN ('running', 'parked');

CREATE TABLE asks (
    id          TEXT PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs (id),
    prompt      TEXT NOT NULL,
    options     TEXT NOT NULL, -- JSON object {"1":"Yes","2":"No"}
    -- The outcome the run parked from; answering restores it.
    parked_from TEXT NOT NULL CHECK (parked_from IN ('running', 'complete', 'partial', 'blocked', 'failed', 'cancelled')),
    created_at  TEXT NOT NULL,
    answer      TEXT,
    answered_at TEXT,
    answered_by INTEGER REFERENCES users (id),
    CHECK ((answer IS NULL) = (answered_at IS NULL))
);
CREATE INDEX asks_open ON asks (run_id, created_at) WHERE answered_at IS NULL;
CREATE INDEX asks_by_run ON asks (run_id, answered_at);

CREATE TABLE tool_calls (
    id                INTEGER PRIMARY KEY,
    run_id            TEXT    NOT NULL REFERENCES runs (id),
    server            TEXT    NOT NULL,
    tool              TEXT    NOT NULL,
    is_side_effecting BOOLEAN NOT NULL,
    started_at        TEXT    NOT NULL,
    recorded_at       TEXT    NOT NULL
);
CREATE INDEX tool_calls_by_run ON tool_calls (run_id, started_at);
CREATE INDEX tool_calls_side_effects ON tool_calls (run_id, started_at) WHERE is_side_effecting;

-- The operators' registry of tools and whether they write. A call that
-- does not say, for a tool nobody classified, is side-effecting.
CREATE TABLE tools (
    server         TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    side_effecting BOOLEAN NOT NULL,
    updated_at     TEXT    NOT NULL,
    updated_by     INTEGER REFERENCES users (id),
    PRIMARY KEY (server, tool)
);

-- A run holding a question is never terminal: the database refuses it.
-- +goose StatementBegin
CREATE TRIGGER runs_no_terminal_with_open_ask
BEFORE UPDATE OF status ON runs
WHEN NEW.status NOT IN ('running', 'parked')
 AND EXISTS (SELECT 1 FROM asks WHERE asks.run_id = NEW.id AND asks.answered_at IS NULL)
BEGIN
    SELECT RAISE(ABORT, 'run_has_open_ask');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER runs_no_terminal_with_open_ask;
DROP TABLE tools;
DROP TABLE tool_calls;
DROP TABLE asks;
DROP TABLE runs;
