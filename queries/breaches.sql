-- name: CreateScopeBreach :one
-- Keeps a breach of a blocked scope: files a coding agent's hook saw an
-- allowed call change inside a blocked scope (an open decision gate's).
-- Each is a critical violation of its session that no policy found
-- (CreateBreachViolation, violations.breach_id).
INSERT INTO scope_breaches (session_id, run_id, server, tool, tool_use_id, command, files, scope, decisions, detected_at)
VALUES (sqlc.arg(session_id), sqlc.arg(run_id), sqlc.arg(server), sqlc.arg(tool), sqlc.arg(tool_use_id), sqlc.arg(command),
        sqlc.arg(files), sqlc.arg(scope), sqlc.arg(decisions), sqlc.arg(detected_at))
RETURNING *;

-- name: CreateBreachViolation :one
-- The critical violation a breach is: no policy found it, so it names the
-- breach instead; it stays open until a person clears it.
INSERT INTO violations (session_id, breach_id, policy, severity, action, match, file, line, detected_at)
VALUES (sqlc.arg(session_id), sqlc.arg(breach_id), sqlc.arg(policy), 'critical', 'violation', sqlc.arg(match), sqlc.arg(file),
        0, sqlc.arg(detected_at))
RETURNING *;

-- name: GetScopeBreach :one
SELECT * FROM scope_breaches WHERE id = sqlc.arg(id);

-- name: ListOpenScopeBreaches :many
-- The session's breaches whose violation is still open, which the brief
-- words their reasons from.
SELECT b.*
FROM violations v
JOIN scope_breaches b ON b.id = v.breach_id
WHERE v.session_id = sqlc.arg(session_id) AND v.closed_at IS NULL
ORDER BY b.id;
