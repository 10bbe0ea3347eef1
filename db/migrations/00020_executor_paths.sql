-- +goose Up
-- Where a session's project lies on the agent's machine: the project
-- root its executor reported (Claude Code's CLAUDE_PROJECT_DIR, else the
-- git top level, else the first cwd), '' until one is known. The
-- executor gate resolves every path a call names relative to it.
ALTER TABLE sessions ADD COLUMN root TEXT NOT NULL DEFAULT '';
-- The input fields a tool names its paths in, as a JSON array of field
-- names ("destination", "files[]"); NULL when the registry names none,
-- and the gate takes every string of a side-effecting call's input for
-- a path.
ALTER TABLE tools ADD COLUMN path_fields TEXT;

-- +goose Down
ALTER TABLE tools DROP COLUMN path_fields;
ALTER TABLE sessions DROP COLUMN root;
