-- +goose Up
-- An id the agent's own client gives a session or a run (a Claude Code
-- session_id), so a client that keeps no state finds it again: opening a
-- session with an external_id its agent key already used re-attaches to
-- that session, and starting a run with an external_id its session
-- already used re-attaches to that run. Unique per agent key (sessions)
-- and per session (runs); NULL for the sessions and runs opened without one.
ALTER TABLE sessions ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX sessions_by_external_id ON sessions (agent_key_id, external_id) WHERE external_id IS NOT NULL;
ALTER TABLE runs ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX runs_by_external_id ON runs (session_id, external_id) WHERE external_id IS NOT NULL;

-- +goose Down
DROP INDEX runs_by_external_id;
ALTER TABLE runs DROP COLUMN external_id;
DROP INDEX sessions_by_external_id;
ALTER TABLE sessions DROP COLUMN external_id;
