-- name: ListSessionRunsAfter :many
-- A page of a session's runs, oldest first (by started_at, then id), after
-- the run the cursor names (an empty after_started_at: from the first), each
-- with how many tool calls it made and questions it asked.
SELECT sqlc.embed(r),
       (SELECT COUNT(*) FROM tool_calls tc WHERE tc.run_id = r.id) AS tool_calls,
       (SELECT COUNT(*) FROM asks a WHERE a.run_id = r.id) AS asks
FROM runs r
WHERE r.session_id = sqlc.arg(session_id)
  AND (CAST(sqlc.arg(after_started_at) AS TEXT) = ''
       OR r.started_at > CAST(sqlc.arg(after_started_at) AS TEXT)
       OR (r.started_at = CAST(sqlc.arg(after_started_at) AS TEXT) AND r.id > CAST(sqlc.arg(after_id) AS TEXT)))
ORDER BY r.started_at, r.id
LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: CountRunLedger :one
-- How many tool calls a run made and questions it asked.
SELECT (SELECT COUNT(*) FROM tool_calls tc WHERE tc.run_id = sqlc.arg(run_id)) AS tool_calls,
       (SELECT COUNT(*) FROM asks a WHERE a.run_id = sqlc.arg(run_id)) AS asks;

-- name: ListRunAsks :many
-- The questions a run asked, oldest first, each with the email of the
-- person who answered it (empty while it waits).
SELECT sqlc.embed(a), COALESCE(u.email, '') AS answered_by_email
FROM asks a
LEFT JOIN users u ON u.id = a.answered_by
WHERE a.run_id = sqlc.arg(run_id)
ORDER BY a.created_at, a.id;

-- name: ListRunToolCallsAfter :many
-- A page of a run's tool calls in the order they were recorded (by id),
-- after the cursor (0 for the first page).
SELECT * FROM tool_calls
WHERE run_id = sqlc.arg(run_id) AND id > sqlc.arg(after_id)
ORDER BY id
LIMIT CAST(sqlc.arg(lim) AS BIGINT);
