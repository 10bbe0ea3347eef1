-- name: CreateAgentKey :one
INSERT INTO agent_keys (name, key_hash, created_at)
VALUES (sqlc.arg(name), sqlc.arg(key_hash), sqlc.arg(created_at))
RETURNING *;

-- name: GetAgentKeyByHash :one
SELECT * FROM agent_keys
WHERE key_hash = sqlc.arg(key_hash) AND revoked_at IS NULL;

-- name: GetAgentKeyByName :one
SELECT * FROM agent_keys WHERE name = sqlc.arg(name);
