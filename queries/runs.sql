-- name: CreateRun :one
INSERT INTO runs (id, session_id, parent_id, name, status, started_at, external_id, plan_id)
VALUES (sqlc.arg(id), sqlc.arg(session_id), sqlc.narg(parent_id), sqlc.arg(name), 'running', sqlc.arg(started_at),
        sqlc.narg(external_id), sqlc.narg(plan_id))
RETURNING *;

-- name: GetRun :one
SELECT r.*, s.agent_key_id, s.lifecycle, s.lifecycle_at
FROM runs r
JOIN sessions s ON s.id = r.session_id
WHERE r.id = sqlc.arg(id);

-- name: ListLiveRuns :many
-- A session's runs that are running or parked, with GetRun's columns:
-- the runs the read model holds for the executor gate's check.
SELECT r.*, s.agent_key_id, s.lifecycle, s.lifecycle_at
FROM runs r
JOIN sessions s ON s.id = r.session_id
WHERE r.session_id = sqlc.arg(session_id) AND r.status IN ('running', 'parked')
ORDER BY r.id;

-- name: GetRunByExternalID :one
-- The run a session started with this external id (re-attach).
SELECT * FROM runs
WHERE session_id = sqlc.arg(session_id) AND external_id = sqlc.arg(external_id);

-- name: SetRunStatus :one
UPDATE runs
SET status = sqlc.arg(status), ended_at = sqlc.narg(ended_at)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: CreateAsk :one
INSERT INTO asks (id, run_id, prompt, options, parked_from, created_at, stopping_point, plan_id)
VALUES (sqlc.arg(id), sqlc.arg(run_id), sqlc.arg(prompt), sqlc.arg(options), sqlc.arg(parked_from), sqlc.arg(created_at),
        sqlc.narg(stopping_point), sqlc.narg(plan_id))
RETURNING *;

-- name: GetAsk :one
SELECT a.*, r.session_id
FROM asks a
JOIN runs r ON r.id = a.run_id
WHERE a.id = sqlc.arg(id);

-- name: GetOpenAsk :one
-- The question a run waits on, if any.
SELECT * FROM asks
WHERE run_id = sqlc.arg(run_id) AND answered_at IS NULL
ORDER BY created_at
LIMIT 1;

-- name: AnswerAsk :one
-- Answers an ask once: a second answer matches no row.
UPDATE asks
SET answer = sqlc.arg(answer), answered_at = sqlc.arg(answered_at), answered_by = sqlc.arg(answered_by)
WHERE id = sqlc.arg(id) AND answered_at IS NULL
RETURNING *;

-- name: CreateToolCall :one
INSERT INTO tool_calls (run_id, server, tool, is_side_effecting, started_at, recorded_at, source_kind, step, paths,
                        tool_use_id, agent_id, agent_type, error)
VALUES (sqlc.arg(run_id), sqlc.arg(server), sqlc.arg(tool), sqlc.arg(is_side_effecting), sqlc.arg(started_at), sqlc.arg(recorded_at),
        sqlc.arg(source_kind), sqlc.arg(step), sqlc.arg(paths), sqlc.arg(tool_use_id), sqlc.arg(agent_id), sqlc.arg(agent_type),
        sqlc.arg(error))
RETURNING *;

-- name: GetTool :one
SELECT * FROM tools WHERE server = sqlc.arg(server) AND tool = sqlc.arg(tool);

-- name: ListTools :many
SELECT * FROM tools ORDER BY server, tool;

-- name: UpsertTool :exec
INSERT INTO tools (server, tool, side_effecting, path_fields, updated_at, updated_by)
VALUES (sqlc.arg(server), sqlc.arg(tool), sqlc.arg(side_effecting), sqlc.narg(path_fields), sqlc.arg(updated_at), sqlc.narg(updated_by))
ON CONFLICT (server, tool) DO UPDATE
SET side_effecting = excluded.side_effecting, path_fields = excluded.path_fields, updated_at = excluded.updated_at,
    updated_by = excluded.updated_by;

-- name: DeleteTool :execrows
DELETE FROM tools WHERE server = sqlc.arg(server) AND tool = sqlc.arg(tool);

-- name: ListReleasedOptions :many
-- The answers given at the stopping points of a plan, on any of its asks
-- (asks.plan_id, whichever run they are on):
-- each releases the steps of the option chosen.
SELECT DISTINCT a.stopping_point, a.answer
FROM asks a
WHERE a.plan_id = sqlc.arg(plan_id) AND a.stopping_point IS NOT NULL AND a.answered_at IS NOT NULL;
