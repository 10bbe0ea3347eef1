-- name: CreateSession :one
INSERT INTO sessions (id, mission_id, agent_key_id, agent, agent_label, title, lifecycle, created_at, external_id)
VALUES (sqlc.arg(id), sqlc.arg(mission_id), sqlc.arg(agent_key_id), sqlc.arg(agent), sqlc.arg(agent_label), sqlc.arg(title),
        sqlc.arg(lifecycle), sqlc.arg(created_at), sqlc.narg(external_id))
RETURNING *;

-- name: GetSession :one
SELECT s.*, m.slug AS mission_slug, m.high_risk AS mission_high_risk, m.gate_ttl AS mission_gate_ttl
FROM sessions s
JOIN missions m ON m.id = s.mission_id
WHERE s.id = sqlc.arg(id);

-- name: SetSessionRoot :execrows
-- Records the session's project root, once: a root recorded stays.
UPDATE sessions SET root = sqlc.arg(root) WHERE id = sqlc.arg(id) AND root = '';

-- name: GetSessionIDByExternalID :one
-- The session an agent key opened with this external id (re-attach).
SELECT id FROM sessions
WHERE agent_key_id = sqlc.arg(agent_key_id) AND external_id = sqlc.arg(external_id);

-- name: GetBriefState :one
-- Everything the brief needs about a session in one read: its brake, its
-- mission's risk and gate_ttl, its latest plan, how many gates, remediations and
-- permission prompts are open (the lists are read only when not empty),
-- and what waits to be handed over or acknowledged: unacked counts what
-- was decided for the agent and not acknowledged, and oldest_delivery is
-- the earliest last delivery among those ('' when one was never
-- delivered, or nothing waits). The brief writes only when
-- something is due (never delivered, or its lease since oldest_delivery
-- ran out) or it acknowledges something.
SELECT s.id, s.agent_key_id, s.root, s.paused_at, s.pause_reason, s.lifecycle, s.lifecycle_at,
       CAST((SELECT m.high_risk FROM missions m WHERE m.id = s.mission_id) AS BOOLEAN) AS high_risk,
       CAST((SELECT m.gate_ttl FROM missions m WHERE m.id = s.mission_id) AS BIGINT) AS gate_ttl,
       CAST(COALESCE((SELECT p.status FROM plans p WHERE p.session_id = s.id ORDER BY p.id DESC LIMIT 1), '') AS TEXT) AS plan_status,
       CAST(COALESCE((SELECT p.note FROM plans p WHERE p.session_id = s.id ORDER BY p.id DESC LIMIT 1), '') AS TEXT) AS plan_note,
       CAST(COALESCE((SELECT p.proposed_at FROM plans p WHERE p.session_id = s.id ORDER BY p.id DESC LIMIT 1), '') AS TEXT) AS plan_proposed_at,
       (SELECT COUNT(*) FROM decisions d
         WHERE d.session_id = s.id AND d.resolved_at IS NULL) AS open_decisions,
       (SELECT COUNT(*) FROM remediations r
         WHERE r.session_id = s.id AND r.closed_at IS NULL) AS open_remediations,
       (SELECT COUNT(*) FROM violations v WHERE v.session_id = s.id AND v.closed_at IS NULL) AS open_violations,
       (SELECT COUNT(*) FROM deviations d WHERE d.session_id = s.id AND d.closed_at IS NULL) AS open_deviations,
       (SELECT COUNT(*) FROM breaches b WHERE b.session_id = s.id AND b.closed_at IS NULL) AS open_breaches,
       (SELECT COUNT(*) FROM collisions c WHERE c.session_id = s.id AND c.closed_at IS NULL) AS open_collisions,
       (SELECT COUNT(*) FROM changes ch WHERE ch.session_id = s.id) AS has_change,
       (SELECT COUNT(*) FROM permission_prompts pp
         WHERE pp.session_id = s.id AND pp.answered_at IS NULL) AS open_permissions,
       CAST((SELECT COUNT(*) FROM decisions d WHERE d.session_id = s.id AND d.resolved_at IS NOT NULL AND d.acked_at IS NULL)
          + (SELECT COUNT(*) FROM plans p WHERE p.session_id = s.id AND p.decided_by IS NOT NULL AND p.acked_at IS NULL)
          + (SELECT COUNT(*) FROM permission_prompts pp WHERE pp.session_id = s.id AND pp.answered_at IS NOT NULL AND pp.acked_at IS NULL)
          + (SELECT COUNT(*) FROM remediations r WHERE r.session_id = s.id AND r.closed_at IS NULL AND r.acked_at IS NULL)
         AS BIGINT) AS unacked,
       CAST(COALESCE((SELECT MIN(x) FROM (
           SELECT COALESCE(d.last_delivered_at, '') AS x FROM decisions d
            WHERE d.session_id = s.id AND d.resolved_at IS NOT NULL AND d.acked_at IS NULL
           UNION ALL SELECT COALESCE(p.last_delivered_at, '') FROM plans p
            WHERE p.session_id = s.id AND p.decided_by IS NOT NULL AND p.acked_at IS NULL
           UNION ALL SELECT COALESCE(pp.last_delivered_at, '') FROM permission_prompts pp
            WHERE pp.session_id = s.id AND pp.answered_at IS NOT NULL AND pp.acked_at IS NULL
           UNION ALL SELECT COALESCE(r.last_delivered_at, '') FROM remediations r
            WHERE r.session_id = s.id AND r.closed_at IS NULL AND r.acked_at IS NULL) AS deliveries), '') AS TEXT) AS oldest_delivery
FROM sessions s
WHERE s.id = sqlc.arg(id);

-- name: PauseSession :execrows
UPDATE sessions
SET paused_at = sqlc.arg(paused_at), paused_by = sqlc.arg(paused_by), pause_reason = sqlc.arg(pause_reason)
WHERE id = sqlc.arg(id) AND paused_at IS NULL;

-- name: ResumeSession :execrows
UPDATE sessions
SET paused_at = NULL, paused_by = NULL, pause_reason = ''
WHERE id = sqlc.arg(id) AND paused_at IS NOT NULL;

-- name: TouchSessionBrief :exec
-- Stamps last_brief_at; briefs are read-only, so these stamps are batched.
UPDATE sessions
SET last_brief_at = sqlc.arg(at)
WHERE id = sqlc.arg(id) AND (last_brief_at IS NULL OR last_brief_at < sqlc.arg(at));

-- name: ListSessionsFiltered :many
-- Every session that passes the filters ('' and 0 match everything):
-- its mission's slug, its agent's name, its executor (what its client
-- called itself, agent_label, else the agent's name), its external id and
-- the agent key that opened it; with its last timeline line's time
-- (updated_at, its creation's before any) and how many questions its runs
-- are parked on. The sessions list orders them by state, which the brief's
-- engine decides.
SELECT s.id, s.agent_key_id, s.agent, s.agent_label, s.title, s.lifecycle, s.last_brief_at, s.created_at, s.external_id, m.slug AS mission_slug,
       CAST(COALESCE((SELECT e.at FROM events e WHERE e.session_id = s.id ORDER BY e.id DESC LIMIT 1), s.created_at) AS TEXT) AS updated_at,
       (SELECT COUNT(*) FROM asks a JOIN runs r ON r.id = a.run_id WHERE r.session_id = s.id AND a.answered_at IS NULL) AS parked_asks
FROM sessions s
JOIN missions m ON m.id = s.mission_id
WHERE (CAST(sqlc.arg(mission) AS TEXT) = '' OR m.slug = sqlc.arg(mission))
  AND (CAST(sqlc.arg(agent) AS TEXT) = '' OR s.agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(executor) AS TEXT) = '' OR (CASE WHEN s.agent_label <> '' THEN s.agent_label ELSE s.agent END) = sqlc.arg(executor))
  AND (CAST(sqlc.arg(external_id) AS TEXT) = '' OR s.external_id = sqlc.arg(external_id))
  AND (CAST(sqlc.arg(agent_key_id) AS BIGINT) = 0 OR s.agent_key_id = sqlc.arg(agent_key_id))
ORDER BY s.created_at, s.id;
