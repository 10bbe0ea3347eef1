-- name: AddEvent :exec
INSERT INTO events (session_id, at, actor, kind, ref, detail)
VALUES (sqlc.arg(session_id), sqlc.arg(at), sqlc.arg(actor), sqlc.arg(kind), sqlc.arg(ref), sqlc.arg(detail));

-- name: ListSessionEvents :many
SELECT * FROM events WHERE session_id = sqlc.arg(session_id) ORDER BY id;
