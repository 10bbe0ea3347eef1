-- name: UpsertChange :exec
INSERT INTO changes (session_id, reported_at, files, lines, dependencies, symbols_changed, symbols_used,
                     risk_score, risk_band, risk_gate, risk_factors)
VALUES (sqlc.arg(session_id), sqlc.arg(reported_at), sqlc.arg(files), sqlc.arg(lines), sqlc.arg(dependencies),
        sqlc.arg(symbols_changed), sqlc.arg(symbols_used), sqlc.arg(risk_score), sqlc.arg(risk_band), sqlc.arg(risk_gate),
        sqlc.arg(risk_factors))
ON CONFLICT (session_id) DO UPDATE
SET reported_at = excluded.reported_at, files = excluded.files, lines = excluded.lines,
    dependencies = excluded.dependencies, symbols_changed = excluded.symbols_changed,
    symbols_used = excluded.symbols_used, risk_score = excluded.risk_score, risk_band = excluded.risk_band,
    risk_gate = excluded.risk_gate, risk_factors = excluded.risk_factors;

-- name: GetChange :one
SELECT * FROM changes WHERE session_id = sqlc.arg(session_id);

-- name: DeleteChangeSymbols :exec
DELETE FROM change_symbols WHERE session_id = sqlc.arg(session_id);

-- name: AddChangeSymbol :exec
INSERT INTO change_symbols (session_id, kind, symbol) VALUES (sqlc.arg(session_id), sqlc.arg(kind), sqlc.arg(symbol))
ON CONFLICT DO NOTHING;

-- name: SessionsWithSymbol :many
-- The other sessions whose latest change has the symbol as kind.
SELECT DISTINCT c.session_id, s.agent
FROM change_symbols c
JOIN sessions s ON s.id = c.session_id
WHERE c.kind = sqlc.arg(kind) AND c.symbol = sqlc.arg(symbol) AND c.session_id <> sqlc.arg(session_id)
ORDER BY c.session_id;

-- name: ListOpenViolations :many
SELECT * FROM violations WHERE session_id = sqlc.arg(session_id) AND closed_at IS NULL ORDER BY detected_at, id;

-- name: CreateViolation :one
INSERT INTO violations (session_id, policy_id, policy, severity, action, match, file, line, detected_at)
VALUES (sqlc.arg(session_id), sqlc.arg(policy_id), sqlc.arg(policy), sqlc.arg(severity), sqlc.arg(action), sqlc.arg(match),
        sqlc.arg(file), sqlc.arg(line), sqlc.arg(detected_at))
RETURNING *;

-- name: CloseViolation :exec
UPDATE violations SET closed_at = sqlc.arg(closed_at) WHERE id = sqlc.arg(id) AND closed_at IS NULL;

-- name: GetViolation :one
SELECT * FROM violations WHERE id = sqlc.arg(id);

-- name: ClearViolation :one
UPDATE violations
SET closed_at = sqlc.arg(closed_at), cleared_by = sqlc.arg(cleared_by), clear_kind = sqlc.arg(clear_kind), clear_note = sqlc.arg(clear_note)
WHERE id = sqlc.arg(id) AND closed_at IS NULL
RETURNING *;

-- name: ListOpenDeviations :many
SELECT d.*, r.concern, r.chosen, r.support, r.total, r.enforced
FROM deviations d
JOIN rules r ON r.id = d.rule_id
WHERE d.session_id = sqlc.arg(session_id) AND d.closed_at IS NULL
ORDER BY d.detected_at, d.id;

-- name: CreateDeviation :one
INSERT INTO deviations (session_id, rule_id, departure, files, detected_at)
VALUES (sqlc.arg(session_id), sqlc.arg(rule_id), sqlc.arg(departure), sqlc.arg(files), sqlc.arg(detected_at))
RETURNING *;

-- name: CloseDeviation :exec
UPDATE deviations SET closed_at = sqlc.arg(closed_at) WHERE id = sqlc.arg(id) AND closed_at IS NULL;

-- name: CloseDeviationBy :execrows
-- A person closes a deviation, by closing the remediation it raised.
UPDATE deviations SET closed_at = sqlc.arg(closed_at), closed_by = sqlc.arg(closed_by)
WHERE id = sqlc.arg(id) AND closed_at IS NULL;

-- name: ListOpenBreaches :many
SELECT * FROM breaches WHERE session_id = sqlc.arg(session_id) AND closed_at IS NULL ORDER BY detected_at, id;

-- name: CreateBreach :one
INSERT INTO breaches (session_id, clause_index, kind, value, found, count, detected_at)
VALUES (sqlc.arg(session_id), sqlc.arg(clause_index), sqlc.arg(kind), sqlc.arg(value), sqlc.arg(found), sqlc.arg(count),
        sqlc.arg(detected_at))
RETURNING *;

-- name: CloseBreach :exec
UPDATE breaches SET closed_at = sqlc.arg(closed_at) WHERE id = sqlc.arg(id) AND closed_at IS NULL;

-- name: ListOpenCollisions :many
SELECT c.*, s.agent AS other_agent
FROM collisions c
JOIN sessions s ON s.id = c.other_session
WHERE c.session_id = sqlc.arg(session_id) AND c.closed_at IS NULL
ORDER BY c.detected_at, c.id;

-- name: CreateCollision :execrows
INSERT INTO collisions (session_id, other_session, symbol, detected_at)
VALUES (sqlc.arg(session_id), sqlc.arg(other_session), sqlc.arg(symbol), sqlc.arg(detected_at))
ON CONFLICT DO NOTHING;

-- name: CloseCollision :exec
UPDATE collisions SET closed_at = sqlc.arg(closed_at) WHERE id = sqlc.arg(id) AND closed_at IS NULL;

-- name: CreateEvidence :one
INSERT INTO evidence (session_id, kind, passed, detail, reported_at)
VALUES (sqlc.arg(session_id), sqlc.arg(kind), sqlc.arg(passed), sqlc.arg(detail), sqlc.arg(reported_at))
RETURNING *;

-- name: ListEvidence :many
SELECT * FROM evidence WHERE session_id = sqlc.arg(session_id) ORDER BY reported_at, id;

-- name: CreateBlockedChange :one
-- Keeps a change report refused because the session was BLOCKED.
INSERT INTO blocked_changes (session_id, attempted_at, files, code, reason)
VALUES (sqlc.arg(session_id), sqlc.arg(attempted_at), sqlc.arg(files), sqlc.arg(code), sqlc.arg(reason))
RETURNING id;
