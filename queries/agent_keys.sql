-- name: CreateAgentKey :one
INSERT INTO agent_keys (name, key_hash, created_at, created_by)
VALUES (sqlc.arg(name), sqlc.arg(key_hash), sqlc.arg(created_at), sqlc.narg(created_by))
RETURNING *;

-- name: GetAgentKeyByHash :one
SELECT * FROM agent_keys
WHERE key_hash = sqlc.arg(key_hash) AND revoked_at IS NULL;

-- name: GetAgentKeyByName :one
SELECT * FROM agent_keys WHERE name = sqlc.arg(name);

-- name: ListAgentKeys :many
SELECT k.id, k.name, k.created_at, k.revoked_at, COALESCE(u.email, '') AS created_by
FROM agent_keys k
LEFT JOIN users u ON u.id = k.created_by
ORDER BY k.created_at, k.id;

-- name: GetAgentKey :one
SELECT * FROM agent_keys WHERE id = sqlc.arg(id);

-- name: RevokeAgentKey :exec
UPDATE agent_keys SET revoked_at = sqlc.arg(revoked_at) WHERE id = sqlc.arg(id) AND revoked_at IS NULL;
