-- name: ListAttentionDecisions :many
-- Open gates, oldest first.
SELECT d.ref, d.title, d.question, d.proposal, d.blocked_scope, d.allowed_scope, d.opened_at,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM decisions d
JOIN sessions s ON s.id = d.session_id
JOIN missions m ON m.id = s.mission_id
WHERE d.resolved_at IS NULL
ORDER BY d.opened_at, d.ref;

-- name: ListAttentionPlans :many
-- Plans waiting for a lead on high-risk missions, oldest first. Only a
-- session's latest plan can be proposed: a new one supersedes the rest.
SELECT p.id, p.summary, p.body, p.proposed_at,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM plans p
JOIN sessions s ON s.id = p.session_id
JOIN missions m ON m.id = s.mission_id
WHERE p.status = 'proposed' AND m.high_risk
ORDER BY p.proposed_at, p.id;

-- name: ListAttentionPauses :many
-- Paused sessions, longest paused first.
SELECT s.id AS session_id, s.title AS session_title, s.agent, s.paused_at, s.pause_reason,
       COALESCE(u.email, '') AS paused_by, m.slug AS mission_slug, m.title AS mission_title
FROM sessions s
JOIN missions m ON m.id = s.mission_id
LEFT JOIN users u ON u.id = s.paused_by
WHERE s.paused_at IS NOT NULL
ORDER BY s.paused_at, s.id;

-- name: ListAttentionViolations :many
-- Open critical violations (HARD_STOP until a person clears them), oldest first.
SELECT v.id, v.policy, v.match, v.file, v.line, v.detected_at,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM violations v
JOIN sessions s ON s.id = v.session_id
JOIN missions m ON m.id = s.mission_id
WHERE v.closed_at IS NULL AND v.severity = 'critical'
ORDER BY v.detected_at, v.id;

-- name: ListAttentionRemediations :many
-- Open required remediations (REMEDIATE), oldest first.
SELECT r.id, r.instruction, r.files, r.source, r.created_at, COALESCE(u.email, '') AS requested_by,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM remediations r
JOIN sessions s ON s.id = r.session_id
JOIN missions m ON m.id = s.mission_id
LEFT JOIN users u ON u.id = r.created_by
WHERE r.closed_at IS NULL AND r.severity = 'required'
ORDER BY r.created_at, r.id;

-- name: CountAttention :one
-- How many items the Attention view lists, for the count in every page.
SELECT (SELECT COUNT(*) FROM decisions d WHERE d.resolved_at IS NULL)
     + (SELECT COUNT(*) FROM plans p JOIN sessions s ON s.id = p.session_id JOIN missions m ON m.id = s.mission_id
         WHERE p.status = 'proposed' AND m.high_risk)
     + (SELECT COUNT(*) FROM sessions s WHERE s.paused_at IS NOT NULL)
     + (SELECT COUNT(*) FROM asks a WHERE a.answered_at IS NULL)
     + (SELECT COUNT(*) FROM violations v WHERE v.closed_at IS NULL AND v.severity = 'critical')
     + (SELECT COUNT(*) FROM remediations r WHERE r.closed_at IS NULL AND r.severity = 'required')
     + (SELECT COUNT(*) FROM permission_prompts pp WHERE pp.answered_at IS NULL)
     + (SELECT COUNT(*) FROM tasks t WHERE t.status = 'blocked') AS items;

-- name: ListAttentionPermissions :many
-- Permission prompts waiting on a person, oldest first.
SELECT pp.id, pp.prompt, pp.options, pp.tool, pp.paths, pp.requested_at,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM permission_prompts pp
JOIN sessions s ON s.id = pp.session_id
JOIN missions m ON m.id = s.mission_id
WHERE pp.answered_at IS NULL
ORDER BY pp.requested_at, pp.id;

-- name: ListAttentionBlockedTasks :many
-- Tasks an agent reported blocked and has not moved since, longest first.
SELECT t.task, t.updated_at,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM tasks t
JOIN sessions s ON s.id = t.session_id
JOIN missions m ON m.id = s.mission_id
WHERE t.status = 'blocked'
ORDER BY t.updated_at, t.session_id, t.task;
