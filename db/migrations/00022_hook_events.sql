-- +goose Up
-- Who made a tool call and how it ended, as the executor reports it: the
-- executor's id of the call (Claude Code's tool_use_id), the subagent
-- that made it ('' for the main agent; Claude Code's agent_id and
-- agent_type), and the error of a call that failed (PostToolUseFailure:
-- "Exit code 3"), '' for one that succeeded.
ALTER TABLE tool_calls ADD COLUMN tool_use_id TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_calls ADD COLUMN agent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_calls ADD COLUMN agent_type TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_calls ADD COLUMN error TEXT NOT NULL DEFAULT '';
CREATE INDEX tool_calls_by_tool_use ON tool_calls (run_id, tool_use_id) WHERE tool_use_id <> '';

-- The executor gate's checks that named the executor's id of the call: the
-- proof that a hook asked before the call ran. A call the transcript
-- holds and no check names ran ungoverned.
CREATE TABLE tool_checks (
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    tool_use_id TEXT    NOT NULL,
    tool        TEXT    NOT NULL, -- as the agent knows it: Bash, mcp__server__tool
    agent_id    TEXT    NOT NULL DEFAULT '',
    allowed     BOOLEAN NOT NULL,
    checked_at  TEXT    NOT NULL,
    PRIMARY KEY (session_id, tool_use_id)
);

-- A breach is either a call that wrote into a blocked scope (kind scope),
-- or a side-effecting call the executor's transcript holds that no hook
-- checked before it ran (kind ungoverned): both are side effects the
-- executor gate did not govern, both a critical violation. An ungoverned
-- call is kept once per executor call (ran_at is when the transcript says
-- it ran).
ALTER TABLE scope_breaches ADD COLUMN kind TEXT NOT NULL DEFAULT 'scope' CHECK (kind IN ('scope', 'ungoverned'));
ALTER TABLE scope_breaches ADD COLUMN agent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE scope_breaches ADD COLUMN agent_type TEXT NOT NULL DEFAULT '';
ALTER TABLE scope_breaches ADD COLUMN ran_at TEXT;
CREATE UNIQUE INDEX scope_breaches_ungoverned ON scope_breaches (session_id, tool_use_id) WHERE kind = 'ungoverned';

-- +goose Down
DROP INDEX scope_breaches_ungoverned;
DELETE FROM remediations WHERE violation_id IN (
    SELECT v.id FROM violations v JOIN scope_breaches b ON b.id = v.breach_id WHERE b.kind = 'ungoverned');
DELETE FROM violations WHERE breach_id IN (SELECT id FROM scope_breaches WHERE kind = 'ungoverned');
DELETE FROM scope_breaches WHERE kind = 'ungoverned';
ALTER TABLE scope_breaches DROP COLUMN ran_at;
ALTER TABLE scope_breaches DROP COLUMN agent_type;
ALTER TABLE scope_breaches DROP COLUMN agent_id;
ALTER TABLE scope_breaches DROP COLUMN kind;
DROP TABLE tool_checks;
DROP INDEX tool_calls_by_tool_use;
ALTER TABLE tool_calls DROP COLUMN error;
ALTER TABLE tool_calls DROP COLUMN agent_type;
ALTER TABLE tool_calls DROP COLUMN agent_id;
ALTER TABLE tool_calls DROP COLUMN tool_use_id;
