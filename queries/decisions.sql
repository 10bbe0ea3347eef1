-- name: NextDecisionNumber :one
-- Safe inside a write transaction: there is one writer.
SELECT CAST(COALESCE(MAX(id), 0) + 1 AS BIGINT) AS next FROM decisions;

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

-- name: CountOpenDecisions :one
-- How many gates wait on a person in the session (the runaway cap).
SELECT COUNT(*) FROM decisions
WHERE session_id = sqlc.arg(session_id) AND resolved_at IS NULL;

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
-- Hands over every resolution of a session that is due: decided and never
-- delivered, or delivered and not acknowledged since cutoff (its lease
-- ran out). delivered_at keeps the first delivery; last_delivered_at and
-- brief_id say which brief handed it over last. The stamp and the read
-- are one statement, so two racing briefs cannot both hand over one row
-- within a lease.
UPDATE decisions
SET delivered_at = COALESCE(delivered_at, sqlc.arg(now)), last_delivered_at = sqlc.arg(now), brief_id = sqlc.arg(brief_id)
WHERE session_id = sqlc.arg(session_id) AND resolved_at IS NOT NULL AND acked_at IS NULL
  AND (delivered_at IS NULL OR last_delivered_at <= sqlc.arg(cutoff))
RETURNING ref, resolution, instruction, resolved_at, resolved_by, delivered_at, last_delivered_at;

-- name: ListUndeliveredResolutions :many
-- What the next brief would hand over, read without stamping (the preview).
SELECT ref, resolution, instruction, resolved_at, resolved_by, delivered_at, last_delivered_at FROM decisions
WHERE session_id = sqlc.arg(session_id) AND resolved_at IS NOT NULL AND acked_at IS NULL
  AND (delivered_at IS NULL OR last_delivered_at <= sqlc.arg(cutoff))
ORDER BY resolved_at, ref;

-- name: AckResolutions :execrows
-- The agent acknowledged brief_id: what it delivered was received.
UPDATE decisions SET acked_at = sqlc.arg(now)
WHERE session_id = sqlc.arg(session_id) AND brief_id = sqlc.arg(brief_id) AND acked_at IS NULL AND delivered_at IS NOT NULL;

-- name: ListGateTTLs :many
-- The gate times to live that missions set (seconds, 0 = never), each once:
-- the sweep expires the gates of each in one statement.
SELECT DISTINCT gate_ttl FROM missions WHERE gate_ttl > 0 ORDER BY gate_ttl;

-- name: ExpireDecisions :many
-- Stamps expired_at on the open gates of missions whose gate_ttl is
-- gate_ttl and that were opened at or before cutoff (now - gate_ttl):
-- open longer than their time to live. Each gate is stamped once: a gate
-- already stamped, or resolved, matches no row, so sweeps that race (two
-- replicas, a restart) record each expiry once.
UPDATE decisions
SET expired_at = sqlc.arg(now)
WHERE resolved_at IS NULL AND expired_at IS NULL AND opened_at <= sqlc.arg(cutoff)
  AND session_id IN (SELECT s.id FROM sessions s JOIN missions m ON m.id = s.mission_id
                     WHERE m.gate_ttl = sqlc.arg(gate_ttl))
RETURNING ref, session_id, question;
