-- name: CreateAgentKey :one
INSERT INTO agent_keys (name, key_hash, prefix, created_at, created_by, expires_at)
VALUES (sqlc.arg(name), sqlc.arg(key_hash), sqlc.arg(prefix), sqlc.arg(created_at), sqlc.narg(created_by), sqlc.narg(expires_at))
RETURNING *;

-- name: GetAgentKeyByHash :one
-- The key a secret's hash names, revoked and expired ones too (the caller
-- says which it is): what every request with an agent key reads.
SELECT id, name, revoked_at, expires_at, last_used_at FROM agent_keys
WHERE key_hash = sqlc.arg(key_hash);

-- name: GetAgentKeyByName :one
SELECT * FROM agent_keys WHERE name = sqlc.arg(name);

-- name: ListAgentKeys :many
SELECT k.id, k.name, k.prefix, k.created_at, k.expires_at, k.last_used_at, k.revoked_at, COALESCE(u.email, '') AS created_by
FROM agent_keys k
LEFT JOIN users u ON u.id = k.created_by
ORDER BY k.created_at, k.id;

-- name: GetAgentKey :one
SELECT * FROM agent_keys WHERE id = sqlc.arg(id);

-- name: RevokeAgentKey :exec
UPDATE agent_keys SET revoked_at = sqlc.arg(revoked_at) WHERE id = sqlc.arg(id) AND revoked_at IS NULL;

-- name: TouchAgentKey :exec
-- Stamps a key's last use, only forward (an earlier time never wins).
UPDATE agent_keys SET last_used_at = sqlc.arg(at)
WHERE id = sqlc.arg(id) AND (last_used_at IS NULL OR last_used_at < sqlc.arg(at));
