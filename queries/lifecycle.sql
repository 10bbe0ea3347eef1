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
-- A session's tasks of its current cycle: a cycle starts when the session
-- leaves IDLE (user.message.created, the one arrow out of it), and a task
-- is of the cycle in which its agent last reported it (a lifecycle.event
-- task.* whose payload names it). How many were created (all of them),
-- how many are now in progress, completed, failed (completed or failed:
-- done), still open, of which blocked; and how many tasks of earlier
-- cycles no longer count.
WITH cycle AS (
    SELECT COALESCE(MAX(c.id), 0) AS start FROM events c
    WHERE c.session_id = sqlc.arg(session_id) AND c.kind = 'lifecycle.transition' AND c.ref = 'user.message.created'
), reported AS (
    SELECT DISTINCT CASE WHEN json_valid(e.detail) THEN json_extract(e.detail, '$.task') END AS task
    FROM events e, cycle
    WHERE e.session_id = sqlc.arg(session_id) AND e.id > cycle.start AND e.kind = 'lifecycle.event'
      AND e.ref IN ('task.created', 'task.progress', 'task.completed', 'task.failed', 'task.blocked')
), current AS (
    SELECT t.status, t.task IN (SELECT task FROM reported) AS now
    FROM tasks t WHERE t.session_id = sqlc.arg(session_id)
)
SELECT CAST(COALESCE(SUM(now), 0) AS INTEGER) AS created,
       CAST(COALESCE(SUM(now AND status = 'progress'), 0) AS INTEGER) AS progress,
       CAST(COALESCE(SUM(now AND status = 'completed'), 0) AS INTEGER) AS completed,
       CAST(COALESCE(SUM(now AND status = 'failed'), 0) AS INTEGER) AS failed,
       CAST(COALESCE(SUM(now AND status IN ('completed', 'failed')), 0) AS INTEGER) AS done,
       CAST(COALESCE(SUM(now AND status NOT IN ('completed', 'failed')), 0) AS INTEGER) AS open,
       CAST(COALESCE(SUM(now AND status = 'blocked'), 0) AS INTEGER) AS blocked,
       CAST(COALESCE(SUM(NOT now), 0) AS INTEGER) AS earlier
FROM current;
