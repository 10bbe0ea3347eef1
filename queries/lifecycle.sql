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
-- Records a task's report in the session's current cycle (tasks.cycle).
INSERT INTO tasks (session_id, task, status, created_at, updated_at, cycle)
VALUES (sqlc.arg(session_id), sqlc.arg(task), sqlc.arg(status), sqlc.arg(at), sqlc.arg(at),
        (SELECT COALESCE(MAX(c.id), 0) FROM events c
         WHERE c.session_id = sqlc.arg(session_id) AND c.kind = 'lifecycle.transition' AND c.ref = 'user.message.created'))
ON CONFLICT (session_id, task) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, cycle = excluded.cycle;

-- name: CountTasks :one
-- A session's tasks of its current cycle: a cycle starts when the session
-- leaves IDLE (user.message.created, the one arrow out of it), and a task
-- is of the cycle in which its agent last reported it (tasks.cycle). How many were created
-- (all of them), how many are now in progress, completed, failed
-- (completed or failed: done), still open, of which blocked; and how many
-- tasks of earlier cycles no longer count.
WITH cycle AS (
    SELECT COALESCE(MAX(c.id), 0) AS start FROM events c
    WHERE c.session_id = sqlc.arg(session_id) AND c.kind = 'lifecycle.transition' AND c.ref = 'user.message.created'
), current AS (
    SELECT t.status, CASE WHEN t.cycle = cycle.start THEN 1 ELSE 0 END AS now
    FROM tasks t, cycle WHERE t.session_id = sqlc.arg(session_id)
)
SELECT CAST(COALESCE(SUM(now), 0) AS BIGINT) AS created,
       CAST(COALESCE(SUM(CASE WHEN now = 1 AND status = 'progress' THEN 1 ELSE 0 END), 0) AS BIGINT) AS progress,
       CAST(COALESCE(SUM(CASE WHEN now = 1 AND status = 'completed' THEN 1 ELSE 0 END), 0) AS BIGINT) AS completed,
       CAST(COALESCE(SUM(CASE WHEN now = 1 AND status = 'failed' THEN 1 ELSE 0 END), 0) AS BIGINT) AS failed,
       CAST(COALESCE(SUM(CASE WHEN now = 1 AND status IN ('completed', 'failed') THEN 1 ELSE 0 END), 0) AS BIGINT) AS done,
       CAST(COALESCE(SUM(CASE WHEN now = 1 AND status NOT IN ('completed', 'failed') THEN 1 ELSE 0 END), 0) AS BIGINT) AS open,
       CAST(COALESCE(SUM(CASE WHEN now = 1 AND status = 'blocked' THEN 1 ELSE 0 END), 0) AS BIGINT) AS blocked,
       CAST(COALESCE(SUM(1 - now), 0) AS BIGINT) AS earlier
FROM current;
