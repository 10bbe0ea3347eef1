-- name: ListSessionRuns :many
-- A session's runs, oldest first, for its page.
SELECT * FROM runs WHERE session_id = sqlc.arg(session_id) ORDER BY started_at, id;

-- name: ListSessionAsks :many
-- The questions a session's runs asked, oldest first.
SELECT sqlc.embed(a) FROM asks a JOIN runs r ON r.id = a.run_id
WHERE r.session_id = sqlc.arg(session_id)
ORDER BY a.created_at, a.id;

-- name: ListSessionToolCalls :many
-- The latest tool calls a session's runs made, newest first, at most
-- max_calls of them.
SELECT sqlc.embed(tc) FROM tool_calls tc JOIN runs r ON r.id = tc.run_id
WHERE r.session_id = sqlc.arg(session_id)
ORDER BY tc.started_at DESC, tc.id DESC
LIMIT CAST(sqlc.arg(max_calls) AS BIGINT);
