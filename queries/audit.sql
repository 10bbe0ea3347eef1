-- The built-in audit reports (seed 001). Passing is zero rows. Each query
-- starts from the few rows it reports on, through a partial index, and
-- reaches the large tables only by key or by index range: none of them
-- reads a whole ledger table (see internal/audit/plan_test.go, which checks
-- every query's plan). Times are compared as stored text (fixed-width
-- RFC 3339, so text order is time order), and the current time is passed
-- in from Go.

-- name: AuditUnanswerableAsks :many
-- Report unanswerable-asks: unanswered asks whose run is terminal, a
-- question the system will refuse to accept an answer to. Driven from the
-- unanswered asks (asks_open), each run found by its key.
SELECT r.id AS run_id, r.status AS run_status, r.session_id, a.id AS ask_id, a.prompt, a.created_at AS asked_at
FROM asks a
CROSS JOIN runs r
WHERE a.answered_at IS NULL
  AND r.id = a.run_id
  AND r.status NOT IN ('running', 'parked')
ORDER BY a.created_at, a.id;

-- name: AuditPrematureSideEffects :many
-- Report premature-side-effects: side-effecting tool calls that started
-- before an ask of their run was answered, or while it is unanswered. The
-- first half goes from the unanswered asks (asks_open), the second from the
-- answered ones (asks_answered), each into its run's side-effecting calls
-- (tool_calls_side_effects), the second only to those that started before
-- the answer. CROSS JOIN fixes that order in SQLite; elsewhere it is a
-- plain inner join.
SELECT t.run_id AS run_id, r.session_id AS session_id, t.id AS tool_call_id, t.server AS server, t.tool AS tool,
       t.started_at AS started_at, a.id AS ask_id, a.answered_at AS answered_at
FROM asks a
CROSS JOIN tool_calls t
CROSS JOIN runs r
WHERE a.answered_at IS NULL
  AND t.run_id = a.run_id AND t.is_side_effecting
  AND r.id = t.run_id
UNION ALL
SELECT t.run_id, r.session_id, t.id AS tool_call_id, t.server, t.tool, t.started_at, a.id AS ask_id, a.answered_at
FROM asks a
CROSS JOIN tool_calls t
CROSS JOIN runs r
WHERE a.answered_at IS NOT NULL
  AND t.run_id = a.run_id AND t.is_side_effecting AND t.started_at < a.answered_at
  AND r.id = t.run_id
ORDER BY started_at, tool_call_id, ask_id;

-- name: AuditScopeBreaches :many
-- Report premature-side-effects, its other half: breaches of a blocked
-- scope, files a coding agent's hook saw a call change inside a blocked
-- scope before its decision was made. Every row is a finding, so the
-- report reads scope_breaches_by_time, all but the ungoverned calls
-- (ungoverned-tool-calls lists those).
SELECT b.id, b.run_id, b.session_id, b.server, b.tool, b.files, b.scope, b.decisions, b.detected_at
FROM scope_breaches b
WHERE b.kind = 'scope'
ORDER BY b.detected_at, b.id;

-- name: AuditUndeliveredResolutions :many
-- Report undelivered-resolutions: gates a person resolved, before
-- resolved_before (now minus the minimum age: a younger resolution is in
-- flight, not lost), that no brief has delivered yet. Driven from
-- decisions_undelivered, which holds exactly the resolved, undelivered
-- gates.
SELECT d.ref, d.session_id, d.resolved_at, COALESCE(u.email, '') AS resolved_by
FROM decisions d
LEFT JOIN users u ON u.id = d.resolved_by
WHERE d.resolved_at IS NOT NULL AND d.delivered_at IS NULL
  AND d.resolved_at < sqlc.arg(resolved_before)
ORDER BY d.resolved_at, d.ref;

-- name: AuditStaleGates :many
-- Report stale-gates: gates open since before opened_before (now minus the
-- configured age). A range search of decisions_open_by_age.
SELECT d.ref, d.session_id, d.title, d.opened_at
FROM decisions d
WHERE d.resolved_at IS NULL AND d.opened_at < sqlc.arg(opened_before)
ORDER BY d.opened_at, d.ref;

-- name: AuditBlockedChanges :many
-- Report blocked-changes: change reports refused because the session was
-- BLOCKED, oldest first. Every row is a finding (an agent that reported a
-- change its brief forbade), so the report reads blocked_changes_by_time
-- whole; the table holds refusals only.
SELECT b.id, b.session_id, s.agent, b.attempted_at, b.code, b.reason, b.files
FROM blocked_changes b
CROSS JOIN sessions s
WHERE s.id = b.session_id
ORDER BY b.attempted_at, b.id;

-- name: AuditUnacknowledgedDeliveries :many
-- Report unacknowledged-deliveries: what a brief handed over (a gate's
-- resolution, a lead's answer to a plan, an answer to a permission prompt,
-- an open remediation request) that the agent has not acknowledged within
-- a lease: its last delivery was at or before cutoff (now minus the
-- delivery lease), or it was delivered again (which only a lease that ran
-- out unacknowledged does), so an agent that briefs often and never acks
-- stays listed. Each part reads its table's *_unacked_delivered index,
-- which holds exactly the delivered, unacknowledged rows. A remediation
-- closed since no longer needs to reach its agent.
SELECT 'resolution' AS kind, d.ref AS ref, d.session_id AS session_id, d.delivered_at AS delivered_at,
       d.last_delivered_at AS last_delivered_at, d.brief_id AS brief_id
FROM decisions d
WHERE d.delivered_at IS NOT NULL AND d.acked_at IS NULL
  AND (d.last_delivered_at <= sqlc.arg(cutoff) OR d.delivered_at < d.last_delivered_at)
UNION ALL
SELECT 'plan answer', 'PLAN-' || p.id, p.session_id, p.delivered_at, p.last_delivered_at, p.brief_id
FROM plans p
WHERE p.delivered_at IS NOT NULL AND p.acked_at IS NULL
  AND (p.last_delivered_at <= sqlc.arg(cutoff) OR p.delivered_at < p.last_delivered_at)
UNION ALL
SELECT 'permission answer', 'PRM-' || pp.id, pp.session_id, pp.delivered_at, pp.last_delivered_at, pp.brief_id
FROM permission_prompts pp
WHERE pp.delivered_at IS NOT NULL AND pp.acked_at IS NULL
  AND (pp.last_delivered_at <= sqlc.arg(cutoff) OR pp.delivered_at < pp.last_delivered_at)
UNION ALL
SELECT 'remediation', 'REM-' || r.id, r.session_id, r.delivered_at, r.last_delivered_at, r.brief_id
FROM remediations r
WHERE r.delivered_at IS NOT NULL AND r.acked_at IS NULL
  AND (r.last_delivered_at <= sqlc.arg(cutoff) OR r.delivered_at < r.last_delivered_at)
  AND r.closed_at IS NULL
ORDER BY delivered_at, kind, ref;

-- name: AuditUngovernedCalls :many
-- Report ungoverned-tool-calls: every side-effecting call a transcript
-- held that no check named (a breach of kind ungoverned), oldest first,
-- with its session, mission and violation, through scope_breaches_by_time.
SELECT b.id, b.session_id, b.run_id, b.server, b.tool, b.tool_use_id, b.files, b.agent_id, b.agent_type, b.ran_at, b.detected_at,
       s.title AS session_title, s.agent, m.slug AS mission_slug,
       COALESCE(v.id, 0) AS violation_id, v.closed_at AS violation_closed_at
FROM scope_breaches b
JOIN sessions s ON s.id = b.session_id
JOIN missions m ON m.id = s.mission_id
LEFT JOIN violations v ON v.breach_id = b.id
WHERE b.kind = 'ungoverned'
ORDER BY b.detected_at, b.id;
