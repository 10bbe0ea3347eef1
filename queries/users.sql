-- name: CreateUser :one
INSERT INTO users (email, password_hash, role, created_at)
VALUES (sqlc.arg(email), sqlc.arg(password_hash), sqlc.arg(role), sqlc.arg(created_at))
RETURNING *;

-- name: GetUserByEmail :one
SELECT * FROM users WHERE email = sqlc.arg(email);

-- name: GetUser :one
SELECT * FROM users WHERE id = sqlc.arg(id);

-- name: ListUsers :many
SELECT id, email, role, disabled_at, created_at FROM users ORDER BY email;

-- name: SetUserRole :exec
UPDATE users SET role = sqlc.arg(role) WHERE id = sqlc.arg(id);

-- name: SetUserDisabledAt :exec
UPDATE users SET disabled_at = sqlc.narg(disabled_at) WHERE id = sqlc.arg(id);

-- name: CountUsers :one
SELECT COUNT(*) FROM users;
