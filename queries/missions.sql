-- name: CreateMission :one
INSERT INTO missions (slug, title, text, high_risk, evidence, contract, created_by, created_at, updated_at)
VALUES (sqlc.arg(slug), sqlc.arg(title), sqlc.arg(text), sqlc.arg(high_risk), sqlc.arg(evidence),
        sqlc.arg(contract), sqlc.arg(created_by), sqlc.arg(created_at), sqlc.arg(created_at))
RETURNING *;

-- name: GetMissionBySlug :one
SELECT * FROM missions WHERE slug = sqlc.arg(slug);

-- name: ListMissions :many
SELECT * FROM missions ORDER BY slug;
