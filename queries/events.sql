-- name: InsertEvent :exec
-- One line of a session's timeline with its link in the chain: only
-- db.AppendEvent calls it (the schema refuses a row that does not chain
-- onto the last one).
INSERT INTO events (id, session_id, at, actor, kind, ref, detail, prev_hash, hash)
VALUES (sqlc.arg(id), sqlc.arg(session_id), sqlc.arg(at), sqlc.arg(actor), sqlc.arg(kind), sqlc.arg(ref), sqlc.arg(detail),
        sqlc.arg(prev_hash), sqlc.arg(hash));

-- name: LastEvent :one
-- The head of the timeline's chain.
SELECT id, hash FROM events ORDER BY id DESC LIMIT 1;

-- name: ListSessionEvents :many
SELECT * FROM events WHERE session_id = sqlc.arg(session_id) ORDER BY id;

-- name: ChainEvents :many
-- The timeline in chain order from the id on, a page at a time.
SELECT * FROM events WHERE id >= sqlc.arg(from_id) ORDER BY id LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: FirstEventSince :one
-- The id from which the timeline holds only events at or after the time
-- (0 when none is): where an export --since starts.
SELECT CAST(COALESCE(MIN(id), 0) AS BIGINT) FROM events WHERE at >= sqlc.arg(since);

-- name: UnchainedEvents :many
-- Events older than the chain (migration 00024), oldest first.
SELECT * FROM events WHERE hash = '' ORDER BY id LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: EventHashBefore :one
-- The hash of the event before the id: what it chains onto.
SELECT hash FROM events WHERE id < sqlc.arg(id) ORDER BY id DESC LIMIT 1;

-- name: ChainOldEvent :execrows
-- Chains an event older than the chain, once (the schema allows no other
-- update).
UPDATE events SET prev_hash = sqlc.arg(prev_hash), hash = sqlc.arg(hash) WHERE id = sqlc.arg(id) AND hash = '';
