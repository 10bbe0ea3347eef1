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
-- Stamps every open remediation the agent has not seen yet, exactly once.
UPDATE remediations
SET delivered_at = sqlc.arg(delivered_at)
WHERE session_id = sqlc.arg(session_id) AND closed_at IS NULL AND delivered_at IS NULL
RETURNING id;

-- name: CloseRemediation :one
UPDATE remediations
SET closed_at = sqlc.arg(closed_at), closed_by = sqlc.arg(closed_by), close_note = sqlc.arg(close_note)
WHERE id = sqlc.arg(id) AND closed_at IS NULL
RETURNING *;
