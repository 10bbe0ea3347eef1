-- name: SetSessionLifecycle :exec
-- Moves a session to a lifecycle state; from then on it is tracked.
-- lifecycle_at is when it entered the state: a transition that stays
-- where it is (task.progress in EXECUTING) keeps it.
UPDATE sessions
SET lifecycle_at = CASE WHEN lifecycle_at IS NULL OR lifecycle <> sqlc.arg(lifecycle)
                        THEN sqlc.arg(lifecycle_at) ELSE lifecycle_at END,
    lifecycle = sqlc.arg(lifecycle)
WHERE id = sqlc.arg(id);

-- name: UpsertTask :exec
INSERT INTO tasks (session_id, task, status, created_at, updated_at)
VALUES (sqlc.arg(session_id), sqlc.arg(task), sqlc.arg(status), sqlc.arg(at), sqlc.arg(at))
ON CONFLICT (session_id, task) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at;

-- name: CountTasks :one
-- A session's tasks: how many were created, how many completed or failed
-- (done), and how many are still open, of which blocked.
SELECT CAST(COUNT(*) AS BIGINT) AS created,
       CAST(COALESCE(SUM(CASE WHEN status IN ('completed', 'failed') THEN 1 ELSE 0 END), 0) AS BIGINT) AS done,
       CAST(COALESCE(SUM(CASE WHEN status NOT IN ('completed', 'failed') THEN 1 ELSE 0 END), 0) AS BIGINT) AS open,
       CAST(COALESCE(SUM(CASE WHEN status = 'blocked' THEN 1 ELSE 0 END), 0) AS BIGINT) AS blocked
FROM tasks WHERE session_id = sqlc.arg(session_id);
