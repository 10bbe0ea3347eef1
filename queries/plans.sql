-- name: SupersedePlans :exec
UPDATE plans SET status = 'superseded'
WHERE session_id = sqlc.arg(session_id) AND status IN ('proposed', 'approved');

-- name: CreatePlan :one
INSERT INTO plans (session_id, summary, body, status, proposed_at, decided_at)
VALUES (sqlc.arg(session_id), sqlc.arg(summary), sqlc.arg(body), sqlc.arg(status), sqlc.arg(proposed_at),
        sqlc.narg(decided_at))
RETURNING *;

-- name: GetLatestPlan :one
SELECT * FROM plans
WHERE session_id = sqlc.arg(session_id)
ORDER BY id DESC
LIMIT 1;

-- name: DecidePlan :one
-- Approves or rejects the session's latest plan, only while it is proposed.
UPDATE plans
SET status = sqlc.arg(status), decided_at = sqlc.arg(decided_at), decided_by = sqlc.arg(decided_by), note = sqlc.arg(note)
WHERE id = sqlc.arg(id) AND status = 'proposed'
RETURNING *;

-- name: DeliverPlanAnswers :many
-- Hands over the leads' answers to the session's plans that are due, as
-- DeliverResolutions does.
UPDATE plans
SET delivered_at = COALESCE(delivered_at, sqlc.arg(now)), last_delivered_at = sqlc.arg(now), brief_id = sqlc.arg(brief_id)
WHERE session_id = sqlc.arg(session_id) AND decided_by IS NOT NULL AND acked_at IS NULL
  AND (delivered_at IS NULL OR last_delivered_at <= sqlc.arg(cutoff))
RETURNING *;

-- name: ListUndeliveredPlanAnswers :many
-- What DeliverPlanAnswers would hand over, for the preview.
SELECT * FROM plans
WHERE session_id = sqlc.arg(session_id) AND decided_by IS NOT NULL AND acked_at IS NULL
  AND (delivered_at IS NULL OR last_delivered_at <= sqlc.arg(cutoff))
ORDER BY id;

-- name: AckPlanAnswers :execrows
UPDATE plans SET acked_at = sqlc.arg(now)
WHERE session_id = sqlc.arg(session_id) AND brief_id = sqlc.arg(brief_id) AND acked_at IS NULL AND delivered_at IS NOT NULL;

-- name: GetPlan :one
SELECT * FROM plans WHERE id = sqlc.arg(id);
