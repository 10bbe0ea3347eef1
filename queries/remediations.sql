-- name: CreateRemediation :one
-- A remediation a violation or a rule raised names it (violation_id,
-- deviation_id); one a person or a collision raised names neither.
INSERT INTO remediations (session_id, severity, instruction, files, source, created_at, created_by, violation_id, deviation_id)
VALUES (sqlc.arg(session_id), sqlc.arg(severity), sqlc.arg(instruction), sqlc.arg(files), sqlc.arg(source),
        sqlc.arg(created_at), sqlc.narg(created_by), sqlc.narg(violation_id), sqlc.narg(deviation_id))
RETURNING *;

-- name: ListOpenRemediationsOfDeviation :many
-- The open remediation a deviation raised, if any.
SELECT * FROM remediations WHERE deviation_id = sqlc.arg(deviation_id) AND closed_at IS NULL;

-- name: CloseRemediationsOfViolation :many
-- Closes the open remediation a violation raised, when it closes.
UPDATE remediations
SET closed_at = sqlc.arg(closed_at), closed_by = sqlc.narg(closed_by), close_note = sqlc.arg(close_note)
WHERE violation_id = sqlc.arg(violation_id) AND closed_at IS NULL
RETURNING *;

-- name: CloseRemediationsOfDeviation :many
-- Closes the open remediation a deviation raised, when it closes.
UPDATE remediations
SET closed_at = sqlc.arg(closed_at), closed_by = sqlc.narg(closed_by), close_note = sqlc.arg(close_note)
WHERE deviation_id = sqlc.arg(deviation_id) AND closed_at IS NULL
RETURNING *;

-- name: GetRemediation :one
SELECT * FROM remediations WHERE id = sqlc.arg(id);

-- name: ListOpenRemediations :many
SELECT * FROM remediations
WHERE session_id = sqlc.arg(session_id) AND closed_at IS NULL
ORDER BY created_at, id;

-- name: ListSessionRemediations :many
SELECT * FROM remediations
WHERE session_id = sqlc.arg(session_id)
ORDER BY created_at, id;

-- name: DeliverRemediations :many
-- Stamps every open remediation that is due, as DeliverResolutions does,
-- and returns them with whether this is a redelivery.
UPDATE remediations
SET delivered_at = COALESCE(delivered_at, sqlc.arg(now)), last_delivered_at = sqlc.arg(now), brief_id = sqlc.arg(brief_id)
WHERE session_id = sqlc.arg(session_id) AND closed_at IS NULL AND acked_at IS NULL
  AND (delivered_at IS NULL OR last_delivered_at <= sqlc.arg(cutoff))
RETURNING id, delivered_at, last_delivered_at;

-- name: AckRemediations :execrows
UPDATE remediations SET acked_at = sqlc.arg(now)
WHERE session_id = sqlc.arg(session_id) AND brief_id = sqlc.arg(brief_id) AND acked_at IS NULL AND delivered_at IS NOT NULL;

-- name: CloseRemediation :one
UPDATE remediations
SET closed_at = sqlc.arg(closed_at), closed_by = sqlc.arg(closed_by), close_note = sqlc.arg(close_note)
WHERE id = sqlc.arg(id) AND closed_at IS NULL
RETURNING *;
