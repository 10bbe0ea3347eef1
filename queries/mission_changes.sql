-- name: CreateMissionChange :one
INSERT INTO mission_changes (mission_id, patch, summary, lowers, note, requested_by, requested_at)
VALUES (sqlc.arg(mission_id), sqlc.arg(patch), sqlc.arg(summary), sqlc.arg(lowers), sqlc.arg(note),
        sqlc.arg(requested_by), sqlc.arg(requested_at))
RETURNING id;

-- name: GetMissionChange :one
SELECT * FROM mission_change_rows WHERE id = sqlc.arg(id);

-- name: ListMissionChanges :many
-- A mission's changes, newest first.
SELECT * FROM mission_change_rows WHERE mission_id = sqlc.arg(mission_id)
ORDER BY id DESC
LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: ListPendingMissionChanges :many
-- Every change waiting for a second lead, oldest first.
SELECT * FROM mission_change_rows WHERE status = 'pending' ORDER BY id;

-- name: SettleMissionChange :execrows
-- Settles a pending change, once: a change already settled is left as it
-- is (0 rows).
UPDATE mission_changes
SET status = sqlc.arg(status), settled_by = sqlc.arg(settled_by), settled_at = sqlc.arg(settled_at),
    settle_note = sqlc.arg(settle_note)
WHERE id = sqlc.arg(id) AND status = 'pending';
