-- name: CreateMission :one
INSERT INTO missions (slug, title, text, high_risk, two_person, evidence, contract, created_by, created_at, updated_at, gate_ttl)
VALUES (sqlc.arg(slug), sqlc.arg(title), sqlc.arg(text), sqlc.arg(high_risk), sqlc.arg(two_person), sqlc.arg(evidence),
        sqlc.arg(contract), sqlc.arg(created_by), sqlc.arg(created_at), sqlc.arg(created_at), sqlc.arg(gate_ttl))
RETURNING *;

-- name: GetMissionBySlug :one
SELECT * FROM missions WHERE slug = sqlc.arg(slug);

-- name: ListMissions :many
SELECT * FROM missions ORDER BY slug;

-- name: ListMissionsWithSessionCounts :many
-- The console's mission list: every mission by slug, with how many
-- sessions work on it.
SELECT sqlc.embed(m),
       (SELECT COUNT(*) FROM sessions s WHERE s.mission_id = m.id) AS sessions
FROM missions m
ORDER BY m.slug;

-- name: UpdateMission :one
-- Everything but the slug (a mission's name for agents) may change.
UPDATE missions
SET title = sqlc.arg(title), text = sqlc.arg(text), high_risk = sqlc.arg(high_risk), two_person = sqlc.arg(two_person),
    evidence = sqlc.arg(evidence), contract = sqlc.arg(contract), updated_at = sqlc.arg(updated_at),
    gate_ttl = sqlc.arg(gate_ttl)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: ListMissionSessionIDs :many
-- The sessions working on a mission, oldest first: what a change to the
-- mission re-briefs.
SELECT id FROM sessions WHERE mission_id = sqlc.arg(mission_id) ORDER BY created_at, id;

-- name: GetMissionByID :one
SELECT * FROM missions WHERE id = sqlc.arg(id);
