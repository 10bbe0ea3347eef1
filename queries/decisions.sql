-- name: NextDecisionNumber :one
-- Safe inside a write transaction: there is one writer.
SELECT CAST(COALESCE(MAX(id), 0) + 1 AS INTEGER) AS next FROM decisions;

-- name: CreateDecision :one
INSERT INTO decisions (id, ref, session_id, title, question, proposal, blocked_scope, allowed_scope, opened_at)
VALUES (sqlc.arg(id), sqlc.arg(ref), sqlc.arg(session_id), sqlc.arg(title), sqlc.arg(question), sqlc.arg(proposal),
        sqlc.arg(blocked_scope), sqlc.arg(allowed_scope), sqlc.arg(opened_at))
RETURNING *;

-- name: GetDecisionByRef :one
SELECT * FROM decisions WHERE ref = sqlc.arg(ref);

-- name: ResolveDecision :one
-- Resolves a gate once: a second resolve matches no row.
UPDATE decisions
SET resolution = sqlc.arg(resolution), instruction = sqlc.arg(instruction),
    resolved_at = sqlc.arg(resolved_at), resolved_by = sqlc.arg(resolved_by)
WHERE ref = sqlc.arg(ref) AND resolved_at IS NULL
RETURNING *;

-- name: ListOpenDecisions :many
SELECT * FROM decisions
WHERE session_id = sqlc.arg(session_id) AND resolved_at IS NULL
ORDER BY opened_at, ref;

-- name: ListSessionDecisions :many
SELECT sqlc.embed(d), COALESCE(u.email, '') AS resolved_by_email
FROM decisions d
LEFT JOIN users u ON u.id = d.resolved_by
WHERE d.session_id = sqlc.arg(session_id)
ORDER BY d.opened_at, d.ref;

-- name: DeliverResolutions :many
-- Hands every decided, undelivered resolution of a session over exactly
-- once: the stamp and the read are one statement, so two racing briefs
-- cannot both see the same row.
UPDATE decisions
SET delivered_at = sqlc.arg(delivered_at)
WHERE session_id = sqlc.arg(session_id) AND resolved_at IS NOT NULL AND delivered_at IS NULL
RETURNING ref, resolution, instruction, resolved_at, resolved_by;

-- name: ListUndeliveredResolutions :many
-- What the next brief would deliver, read without stamping (the preview).
SELECT ref, resolution, instruction, resolved_at, resolved_by FROM decisions
WHERE session_id = sqlc.arg(session_id) AND resolved_at IS NOT NULL AND delivered_at IS NULL
ORDER BY resolved_at, ref;
