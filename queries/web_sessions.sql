-- name: CreateWebSession :exec
INSERT INTO web_sessions (id_hash, user_id, csrf_token, created_at, last_seen_at)
VALUES (sqlc.arg(id_hash), sqlc.arg(user_id), sqlc.arg(csrf_token), sqlc.arg(created_at), sqlc.arg(created_at));

-- name: GetWebSession :one
SELECT w.id_hash, w.csrf_token, w.created_at, w.last_seen_at,
       u.id AS user_id, u.email, u.role, u.disabled_at
FROM web_sessions w
JOIN users u ON u.id = w.user_id
WHERE w.id_hash = sqlc.arg(id_hash);

-- name: TouchWebSession :exec
UPDATE web_sessions SET last_seen_at = sqlc.arg(last_seen_at) WHERE id_hash = sqlc.arg(id_hash);

-- name: DeleteWebSession :exec
DELETE FROM web_sessions WHERE id_hash = sqlc.arg(id_hash);

-- name: DeleteUserWebSessions :execrows
DELETE FROM web_sessions WHERE user_id = sqlc.arg(user_id);

-- name: DeleteExpiredWebSessions :execrows
DELETE FROM web_sessions
WHERE created_at < sqlc.arg(created_before) OR last_seen_at < sqlc.arg(seen_before);

-- name: AddLoginFailure :exec
INSERT INTO login_failures (email, address, at) VALUES (sqlc.arg(email), sqlc.arg(address), sqlc.arg(at));

-- name: CountLoginFailures :one
SELECT
  (SELECT COUNT(*) FROM login_failures f WHERE f.email = sqlc.arg(email) AND f.at >= sqlc.arg(since)) AS by_email,
  (SELECT COUNT(*) FROM login_failures f WHERE f.address = sqlc.arg(address) AND f.at >= sqlc.arg(since)) AS by_address;

-- name: ClearLoginFailures :exec
DELETE FROM login_failures WHERE email = sqlc.arg(email);

-- name: DeleteOldLoginFailures :exec
DELETE FROM login_failures WHERE at < sqlc.arg(before);

-- name: TrimLoginFailures :exec
-- Keeps the newest `keep` failures: the table's size has a bound whatever
-- emails and addresses the callers choose.
DELETE FROM login_failures
WHERE id <= (SELECT f.id FROM login_failures f ORDER BY f.id DESC LIMIT 1 OFFSET CAST(sqlc.arg(keep) AS BIGINT));
