-- name: CreatePolicy :one
INSERT INTO policies (name, severity, kind, pattern, action, builtin, created_at, created_by)
VALUES (sqlc.arg(name), sqlc.arg(severity), sqlc.arg(kind), sqlc.arg(pattern), sqlc.arg(action), sqlc.arg(builtin),
        sqlc.arg(created_at), sqlc.narg(created_by))
RETURNING *;

-- name: ListPolicies :many
SELECT * FROM policies ORDER BY id;

-- name: GetSetting :one
SELECT value FROM settings WHERE key = sqlc.arg(key);

-- name: SetSetting :exec
INSERT INTO settings (key, value) VALUES (sqlc.arg(key), sqlc.arg(value))
ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- name: CreateRule :one
INSERT INTO rules (concern, chosen, departures, support, total, enforced, created_at, created_by)
VALUES (sqlc.arg(concern), sqlc.arg(chosen), sqlc.arg(departures), sqlc.arg(support), sqlc.arg(total), sqlc.arg(enforced),
        sqlc.arg(created_at), sqlc.narg(created_by))
RETURNING *;

-- name: ListRules :many
SELECT * FROM rules ORDER BY id;
