-- name: CreateRemediation :one
INSERT INTO remediations (session_id, severity, instruction, files, source, created_at, created_by)
VALUES (sqlc.arg(session_id), sqlc.arg(severity), sqlc.arg(instruction), sqlc.arg(files), sqlc.arg(source),
        sqlc.arg(created_at), sqlc.narg(created_by))
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
