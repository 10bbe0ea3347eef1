-- name: CreatePolicy :one
INSERT INTO policies (name, severity, kind, pattern, action, builtin, created_at, created_by)
VALUES (sqlc.arg(name), sqlc.arg(severity), sqlc.arg(kind), sqlc.arg(pattern), sqlc.arg(action), sqlc.arg(builtin),
        sqlc.arg(created_at), sqlc.narg(created_by))
RETURNING *;

-- name: ListPolicies :many
-- Every policy not deleted, disabled ones too.
SELECT * FROM policies WHERE deleted_at IS NULL ORDER BY id;

-- name: ListActivePolicies :many
-- The policies a change is evaluated against: neither disabled nor deleted.
SELECT * FROM policies WHERE disabled_at IS NULL AND deleted_at IS NULL ORDER BY id;

-- name: GetPolicy :one
SELECT * FROM policies WHERE id = sqlc.arg(id) AND deleted_at IS NULL;

-- name: SetPolicyDisabled :one
-- Disables a policy (disabled_at set) or enables it again (NULL).
UPDATE policies SET disabled_at = sqlc.narg(disabled_at), disabled_by = sqlc.narg(disabled_by)
WHERE id = sqlc.arg(id) AND deleted_at IS NULL
RETURNING *;

-- name: DeletePolicy :one
UPDATE policies SET deleted_at = sqlc.arg(deleted_at), deleted_by = sqlc.narg(deleted_by)
WHERE id = sqlc.arg(id) AND deleted_at IS NULL
RETURNING *;

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
