-- name: InsertAdminActivity :exec
-- One entry of the activity record with its link in the chain: only
-- db.AppendActivity calls it (the schema refuses a row that does not
-- chain onto the last one).
INSERT INTO admin_activity (id, at, actor, action, target, before_json, after_json, prev_hash, hash)
VALUES (sqlc.arg(id), sqlc.arg(at), sqlc.arg(actor), sqlc.arg(action), sqlc.arg(target), sqlc.narg(before_json), sqlc.narg(after_json),
        sqlc.arg(prev_hash), sqlc.arg(hash));

-- name: LastAdminActivity :one
-- The head of the activity record's chain.
SELECT id, hash FROM admin_activity ORDER BY id DESC LIMIT 1;

-- name: ListAdminActivity :many
-- The actions older than the cursor (an id), newest first, whose action
-- starts with the prefix ('' for every one), of the actor ('' for
-- anyone), done at or after since ('' for ever).
SELECT *
FROM admin_activity
WHERE id < sqlc.arg(before) AND substr(action, 1, length(CAST(sqlc.arg(prefix) AS TEXT))) = CAST(sqlc.arg(prefix) AS TEXT)
  AND (CAST(sqlc.arg(actor) AS TEXT) = '' OR actor = CAST(sqlc.arg(actor) AS TEXT))
  AND at >= CAST(sqlc.arg(since) AS TEXT)
ORDER BY id DESC
LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: ChainAdminActivity :many
-- The activity record in chain order from the id on, a page at a time.
SELECT * FROM admin_activity WHERE id >= sqlc.arg(from_id) ORDER BY id LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: FirstAdminActivitySince :one
-- The id from which the activity record holds only entries at or after
-- the time (0 when none is): where an export --since starts.
SELECT CAST(COALESCE(MIN(id), 0) AS BIGINT) FROM admin_activity WHERE at >= sqlc.arg(since);

-- name: UnchainedAdminActivity :many
-- Entries older than the chain (migration 00024), oldest first.
SELECT * FROM admin_activity WHERE hash = '' ORDER BY id LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: AdminActivityHashBefore :one
-- The hash of the entry before the id: what it chains onto.
SELECT hash FROM admin_activity WHERE id < sqlc.arg(id) ORDER BY id DESC LIMIT 1;

-- name: ChainOldAdminActivity :execrows
-- Chains an entry older than the chain, once (the schema allows no other
-- update).
UPDATE admin_activity SET prev_hash = sqlc.arg(prev_hash), hash = sqlc.arg(hash) WHERE id = sqlc.arg(id) AND hash = '';
