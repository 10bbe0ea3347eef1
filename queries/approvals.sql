-- name: ListStandingApprovals :many
-- The approvals standing towards a target, oldest first, with what their
-- people are now (an approval counts only while its person can approve:
-- approval.VoidReason).
SELECT a.user_id, a.content, a.note, a.at, COALESCE(u.email, '') AS email,
       CAST(u.id IS NOT NULL AS BOOLEAN) AS user_exists, COALESCE(u.role, '') AS role,
       CAST(u.disabled_at IS NOT NULL AS BOOLEAN) AS disabled
FROM approvals a
LEFT JOIN users u ON u.id = a.user_id
WHERE a.target = sqlc.arg(target) AND a.target_id = sqlc.arg(target_id) AND a.settled_at IS NULL
ORDER BY a.id;

-- name: ListAllStandingApprovals :many
-- Every approval still waiting for its second, for the pages that show
-- "1 of 2": few at any time, as approvals settle when they take effect.
-- ref is how the Attention view names the target: a gate's reference, a
-- plan's session, a violation's id.
SELECT a.target,
       CAST(CASE a.target
           WHEN 'decision' THEN (SELECT d.ref FROM decisions d WHERE d.id = a.target_id)
           WHEN 'plan' THEN a.session_id
           ELSE CAST(a.target_id AS TEXT) END AS TEXT) AS ref,
       a.content, a.note, a.at, COALESCE(u.email, '') AS email,
       CAST(u.id IS NOT NULL AS BOOLEAN) AS user_exists, COALESCE(u.role, '') AS role,
       CAST(u.disabled_at IS NOT NULL AS BOOLEAN) AS disabled
FROM approvals a
LEFT JOIN users u ON u.id = a.user_id
-- The target condition holds for every row (the table's CHECK): it is
-- there so that SQLite reads the small partial index approvals_standing_all
-- rather than the whole table (portable SQL, unlike INDEXED BY).
WHERE a.settled_at IS NULL AND a.target IN ('decision', 'plan', 'violation')
ORDER BY a.id;

-- name: AddApproval :exec
INSERT INTO approvals (target, target_id, session_id, user_id, content, note, at, settled_at)
VALUES (sqlc.arg(target), sqlc.arg(target_id), sqlc.arg(session_id), sqlc.arg(user_id), sqlc.arg(content), sqlc.arg(note),
        sqlc.arg(at), sqlc.narg(settled_at));

-- name: SettleApprovals :exec
UPDATE approvals SET settled_at = sqlc.arg(at)
WHERE target = sqlc.arg(target) AND target_id = sqlc.arg(target_id) AND settled_at IS NULL;

-- name: GetApprovalPolicy :one
-- What a session's approvals need: whether its mission asks for two
-- people, and who created its agent key.
SELECT CAST(m.two_person AS BOOLEAN) AS two_person, k.created_by, k.name AS key_name
FROM sessions s
JOIN missions m ON m.id = s.mission_id
JOIN agent_keys k ON k.id = s.agent_key_id
WHERE s.id = sqlc.arg(session_id);
