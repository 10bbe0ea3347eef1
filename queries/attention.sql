-- The Attention queue: one query per kind of item, each narrowed by the
-- same three optional filters (an empty string matches everything), in
-- the same order, so that their parameters share one shape: the mission's
-- slug, the agent's name and the session's id.

-- name: ListAttentionDecisions :many
-- Open gates, oldest first, with their mission's gate_ttl and the
-- sweep's expiry stamp: whether one is expired is the clock's to say.
SELECT d.ref, d.title, d.question, d.proposal, d.blocked_scope, d.allowed_scope, d.opened_at, d.expired_at,
       m.gate_ttl, s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM decisions d
JOIN sessions s ON s.id = d.session_id
JOIN missions m ON m.id = s.mission_id
WHERE d.resolved_at IS NULL
  AND (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(session) AS TEXT) = '' OR s.id = sqlc.arg(session))
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
  AND (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(session) AS TEXT) = '' OR s.id = sqlc.arg(session))
ORDER BY p.proposed_at, p.id;

-- name: ListAttentionPauses :many
-- Paused sessions, longest paused first.
SELECT s.id AS session_id, s.title AS session_title, s.agent, s.paused_at, s.pause_reason,
       COALESCE(u.email, '') AS paused_by, m.slug AS mission_slug, m.title AS mission_title
FROM sessions s
JOIN missions m ON m.id = s.mission_id
LEFT JOIN users u ON u.id = s.paused_by
WHERE s.paused_at IS NOT NULL
  AND (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(session) AS TEXT) = '' OR s.id = sqlc.arg(session))
ORDER BY s.paused_at, s.id;

-- name: ListAttentionAsks :many
-- Every unanswered ask, oldest first, with its run and session.
SELECT a.id, a.prompt, a.options, a.created_at, a.run_id, r.name AS run_name,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM asks a
JOIN runs r ON r.id = a.run_id
JOIN sessions s ON s.id = r.session_id
JOIN missions m ON m.id = s.mission_id
WHERE a.answered_at IS NULL
  AND (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(session) AS TEXT) = '' OR s.id = sqlc.arg(session))
ORDER BY a.created_at, a.id;

-- name: ListAttentionViolations :many
-- Open critical violations (HARD_STOP until a person clears them), oldest first.
-- A breach of a blocked scope carries its files and scope (NULL for a
-- policy's finding).
SELECT v.id, v.severity, v.policy, v.match, v.file, v.line, v.detected_at,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title,
       v.breach_id, CAST(COALESCE(b.files, '') AS TEXT) AS breach_files, CAST(COALESCE(b.scope, '') AS TEXT) AS breach_scope,
       CAST(COALESCE(b.kind, '') AS TEXT) AS breach_kind
FROM violations v
JOIN sessions s ON s.id = v.session_id
JOIN missions m ON m.id = s.mission_id
LEFT JOIN scope_breaches b ON b.id = v.breach_id
WHERE v.closed_at IS NULL AND v.severity = 'critical'
  AND (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(session) AS TEXT) = '' OR s.id = sqlc.arg(session))
ORDER BY v.detected_at, v.id;

-- name: ListAttentionRemediations :many
-- Open required remediations (REMEDIATE), oldest first.
SELECT r.id, r.severity, r.instruction, r.files, r.source, r.created_at, COALESCE(u.email, '') AS requested_by,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM remediations r
JOIN sessions s ON s.id = r.session_id
JOIN missions m ON m.id = s.mission_id
LEFT JOIN users u ON u.id = r.created_by
WHERE r.closed_at IS NULL AND r.severity = 'required'
  AND (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(session) AS TEXT) = '' OR s.id = sqlc.arg(session))
ORDER BY r.created_at, r.id;

-- name: ListAttentionPermissions :many
-- Permission prompts waiting on a person, oldest first.
SELECT pp.id, pp.prompt, pp.options, pp.tool, pp.paths, pp.requested_at,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM permission_prompts pp
JOIN sessions s ON s.id = pp.session_id
JOIN missions m ON m.id = s.mission_id
WHERE pp.answered_at IS NULL
  AND (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(session) AS TEXT) = '' OR s.id = sqlc.arg(session))
ORDER BY pp.requested_at, pp.id;

-- name: ListAttentionBlockedTasks :many
-- Tasks an agent reported blocked and has not moved since, longest first:
-- of the session's current cycle only (last reported since the session
-- last left IDLE, tasks.cycle; a task of an earlier cycle no longer counts, CountTasks).
SELECT t.task, t.updated_at,
       s.id AS session_id, s.title AS session_title, s.agent, m.slug AS mission_slug, m.title AS mission_title
FROM tasks t
JOIN sessions s ON s.id = t.session_id
JOIN missions m ON m.id = s.mission_id
WHERE t.status = 'blocked'
  AND t.cycle = (SELECT COALESCE(MAX(c.id), 0) FROM events c
         WHERE c.session_id = t.session_id AND c.kind = 'lifecycle.transition' AND c.ref = 'user.message.created')
  AND (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(session) AS TEXT) = '' OR s.id = sqlc.arg(session))
ORDER BY t.updated_at, t.session_id, t.task;

-- name: CountAttention :one
-- How many items of each kind the Attention queue lists under the filters,
-- and when the newest of them was opened: the counts in every page, and a
-- fingerprint of the queue (an item added or removed changes it). expired
-- and latest_expired count the open gates the sweep stamped expired, so
-- that the sweep's stamp (a gate moving to the top) changes it too; marks
-- and latest_mark count the claims, snoozes and acknowledgements people put
-- on items and when the newest was made, so that a mark changes it too.
WITH scope AS (
  SELECT s.id, s.paused_at, m.high_risk
  FROM sessions s
  JOIN missions m ON m.id = s.mission_id
  WHERE (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
    AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
    AND (CAST(sqlc.arg(session) AS TEXT) = '' OR s.id = sqlc.arg(session))
),
decision AS (SELECT COUNT(*) AS n, COALESCE(MAX(d.opened_at), '') AS latest,
    COUNT(d.expired_at) AS expired, COALESCE(MAX(d.expired_at), '') AS latest_expired
  FROM decisions d JOIN scope ON scope.id = d.session_id WHERE d.resolved_at IS NULL),
plan AS (SELECT COUNT(*) AS n, COALESCE(MAX(p.proposed_at), '') AS latest
  FROM plans p JOIN scope ON scope.id = p.session_id WHERE p.status = 'proposed' AND scope.high_risk),
paused AS (SELECT COUNT(*) AS n, COALESCE(MAX(scope.paused_at), '') AS latest
  FROM scope WHERE scope.paused_at IS NOT NULL),
ask AS (SELECT COUNT(*) AS n, COALESCE(MAX(a.created_at), '') AS latest
  FROM asks a JOIN runs r ON r.id = a.run_id JOIN scope ON scope.id = r.session_id WHERE a.answered_at IS NULL),
violation AS (SELECT COUNT(*) AS n, COALESCE(MAX(v.detected_at), '') AS latest
  FROM violations v JOIN scope ON scope.id = v.session_id WHERE v.closed_at IS NULL AND v.severity = 'critical'),
remediation AS (SELECT COUNT(*) AS n, COALESCE(MAX(r.created_at), '') AS latest
  FROM remediations r JOIN scope ON scope.id = r.session_id WHERE r.closed_at IS NULL AND r.severity = 'required'),
permission AS (SELECT COUNT(*) AS n, COALESCE(MAX(pp.requested_at), '') AS latest
  FROM permission_prompts pp JOIN scope ON scope.id = pp.session_id WHERE pp.answered_at IS NULL),
task AS (SELECT COUNT(*) AS n, COALESCE(MAX(t.updated_at), '') AS latest
  FROM tasks t JOIN scope ON scope.id = t.session_id WHERE t.status = 'blocked'
  AND t.cycle = (SELECT COALESCE(MAX(c.id), 0) FROM events c
         WHERE c.session_id = t.session_id AND c.kind = 'lifecycle.transition' AND c.ref = 'user.message.created')),
mark AS (SELECT COUNT(*) AS n, COALESCE(MAX(x.at), '') AS latest
  FROM (SELECT c.session_id, c.claimed_at AS at FROM attention_claims c
        UNION ALL SELECT z.session_id, z.snoozed_at FROM attention_snoozes z
        UNION ALL SELECT k.session_id, k.acked_at FROM attention_acks k) AS x
  JOIN scope ON scope.id = x.session_id)
SELECT decision.n AS decisions, plan.n AS plans, paused.n AS paused, ask.n AS asks,
       violation.n AS violations, remediation.n AS remediations, permission.n AS permissions, task.n AS tasks,
       -- latest: the latest of the eight, the MAX of a list: portable, where
       -- a scalar max(a, b) is spelled GREATEST(a, b) on PostgreSQL only.
       CAST((SELECT MAX(l.latest) FROM (
           SELECT decision.latest AS latest UNION ALL SELECT plan.latest UNION ALL SELECT paused.latest
           UNION ALL SELECT ask.latest UNION ALL SELECT violation.latest UNION ALL SELECT remediation.latest
           UNION ALL SELECT permission.latest UNION ALL SELECT task.latest) AS l) AS TEXT) AS latest,
       decision.expired AS expired, CAST(decision.latest_expired AS TEXT) AS latest_expired,
       mark.n AS marks, CAST(mark.latest AS TEXT) AS latest_mark
FROM decision, plan, paused, ask, violation, remediation, permission, task, mark;
