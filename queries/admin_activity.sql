-- name: AddAdminActivity :exec
INSERT INTO admin_activity (at, actor, action, target, before_json, after_json)
VALUES (sqlc.arg(at), sqlc.arg(actor), sqlc.arg(action), sqlc.arg(target), sqlc.narg(before_json), sqlc.narg(after_json));

-- name: ListAdminActivity :many
-- The actions older than the cursor (an id), newest first, whose action
-- starts with the prefix ('' for every one), of the actor ('' for
-- anyone), done at or after since ('' for ever).
SELECT id, at, actor, action, target, before_json, after_json
FROM admin_activity
WHERE id < sqlc.arg(before) AND substr(action, 1, length(CAST(sqlc.arg(prefix) AS TEXT))) = CAST(sqlc.arg(prefix) AS TEXT)
  AND (CAST(sqlc.arg(actor) AS TEXT) = '' OR actor = CAST(sqlc.arg(actor) AS TEXT))
  AND at >= CAST(sqlc.arg(since) AS TEXT)
ORDER BY id DESC
LIMIT CAST(sqlc.arg(lim) AS BIGINT);
