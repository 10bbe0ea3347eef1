-- name: CreateToolCheck :exec
-- Keeps that the executor gate checked the executor's call tool_use_id
-- before it ran: the proof the ungoverned-tool-calls audit looks for. A
-- second check of the same call keeps the first.
INSERT INTO tool_checks (session_id, tool_use_id, tool, agent_id, allowed, checked_at)
VALUES (sqlc.arg(session_id), sqlc.arg(tool_use_id), sqlc.arg(tool), sqlc.arg(agent_id), sqlc.arg(allowed), sqlc.arg(checked_at))
ON CONFLICT (session_id, tool_use_id) DO NOTHING;

-- name: ToolCheckExists :one
-- Whether the executor gate checked the call before it ran.
SELECT EXISTS (SELECT 1 FROM tool_checks WHERE session_id = sqlc.arg(session_id) AND tool_use_id = sqlc.arg(tool_use_id));

-- name: CreateUngovernedCall :one
-- Keeps a side-effecting call the executor's transcript holds that no
-- check named: a breach of kind ungoverned, once per call (a transcript
-- reported again adds nothing: no row comes back).
INSERT INTO scope_breaches (kind, session_id, run_id, server, tool, tool_use_id, command, files, scope, decisions, detected_at,
                            agent_id, agent_type, ran_at)
VALUES ('ungoverned', sqlc.arg(session_id), sqlc.arg(run_id), sqlc.arg(server), sqlc.arg(tool), sqlc.arg(tool_use_id), '',
        sqlc.arg(files), '[]', '[]', sqlc.arg(detected_at), sqlc.arg(agent_id), sqlc.arg(agent_type), sqlc.arg(ran_at))
ON CONFLICT (session_id, tool_use_id) WHERE kind = 'ungoverned' DO NOTHING
RETURNING *;

-- name: GetHookRun :one
-- The Claude Code hook's re-attach in one read: the session an agent key
-- opened with this external id, its mission's slug and its root, and the
-- session's run that has the same external id (the hook's run).
SELECT s.id AS session_id, m.slug AS mission_slug, s.root, r.id AS run_id
FROM sessions s
JOIN missions m ON m.id = s.mission_id
JOIN runs r ON r.session_id = s.id AND r.external_id = s.external_id
WHERE s.agent_key_id = sqlc.arg(agent_key_id) AND s.external_id = sqlc.arg(external_id);
