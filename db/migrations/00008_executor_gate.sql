-- +goose Up
-- The executor gate: runs that execute a session's approved plan, asks
-- that are a plan's stopping point, tool calls that name the step they
-- run, the change reports refused while the session was BLOCKED, and a
-- trigger that keeps an unanswered ask off a terminal run however it is
-- inserted.

-- The approved plan a run executes (POST …/runs {"plan": true}); NULL: a
-- run of no plan.
-- (No REFERENCES: SQLite cannot drop a column a foreign key uses, and the
-- ledger sets it only from the session's own approved plan.)
ALTER TABLE runs ADD COLUMN plan_id INTEGER;
CREATE INDEX runs_by_plan ON runs (plan_id) WHERE plan_id IS NOT NULL;

-- The plan's stopping point an ask is; answering it with option N
-- releases that option's steps for every run of the plan.
ALTER TABLE asks ADD COLUMN stopping_point INTEGER;
CREATE INDEX asks_stopping_points ON asks (run_id, stopping_point, answer)
    WHERE stopping_point IS NOT NULL AND answered_at IS NOT NULL;

-- The plan step a call runs, and the paths it names (a JSON array).
ALTER TABLE tool_calls ADD COLUMN step TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_calls ADD COLUMN paths TEXT NOT NULL DEFAULT '[]';

-- A change report refused because the session was BLOCKED: kept as an
-- attempt (the audit report blocked-changes lists them all).
CREATE TABLE blocked_changes (
    id           INTEGER PRIMARY KEY,
    session_id   TEXT    NOT NULL REFERENCES sessions (id),
    attempted_at TEXT    NOT NULL,
    files        TEXT    NOT NULL, -- JSON array of the paths the report named
    code         TEXT    NOT NULL, -- the brief's reason code: paused, plan_not_approved, plan_revising
    reason       TEXT    NOT NULL  -- the brief's reason, as the agent was told
);
CREATE INDEX blocked_changes_by_time ON blocked_changes (attempted_at, id);

-- An unanswered ask never lands on a terminal run: the database refuses
-- the INSERT as it refuses ending a run that holds one (00003).
-- +goose StatementBegin
CREATE TRIGGER asks_no_open_ask_on_terminal_run
BEFORE INSERT ON asks
WHEN NEW.answered_at IS NULL
 AND EXISTS (SELECT 1 FROM runs WHERE runs.id = NEW.run_id AND runs.status NOT IN ('running', 'parked'))
BEGIN
    SELECT RAISE(ABORT, 'ask_on_terminal_run');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER asks_no_open_ask_on_terminal_run;
DROP INDEX blocked_changes_by_time;
DROP TABLE blocked_changes;
ALTER TABLE tool_calls DROP COLUMN paths;
ALTER TABLE tool_calls DROP COLUMN step;
DROP INDEX asks_stopping_points;
ALTER TABLE asks DROP COLUMN stopping_point;
DROP INDEX runs_by_plan;
ALTER TABLE runs DROP COLUMN plan_id;
