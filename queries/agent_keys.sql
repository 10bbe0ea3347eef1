-- name: CreateAgentKey :one
INSERT INTO agent_keys (name, key_hash, created_at)
VALUES (sqlc.arg(name), sqlc.arg(key_hash), sqlc.arg(created_at))
RETURNING *;

-- name: GetAgentKeyByHash :one
SELECT * FROM agent_keys
WHERE key_hash = sqlc.arg(key_hash) AND revoked_at IS NULL;

-- name: GetAgentKeyByName :one
SELECT * FROM agent_keys WHERE name = sqlc.arg(name);

-- name: ListAgentKeys :many
SELECT id, name, created_at, revoked_at FROM agent_keys ORDER BY created_at, id;

-- name: GetAgentKey :one
SELECT * FROM agent_keys WHERE id = sqlc.arg(id);

-- name: RevokeAgentKey :exec
UPDATE agent_keys SET revoked_at = sqlc.arg(revoked_at) WHERE id = sqlc.arg(id) AND revoked_at IS NULL;
