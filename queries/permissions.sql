-- name: CreatePermissionPrompt :one
INSERT INTO permission_prompts (session_id, prompt, options, tool, paths, requested_at)
VALUES (sqlc.arg(session_id), sqlc.arg(prompt), sqlc.arg(options), sqlc.arg(tool), sqlc.arg(paths), sqlc.arg(requested_at))
RETURNING *;

-- name: GetPermissionPrompt :one
SELECT * FROM permission_prompts WHERE id = sqlc.arg(id);

-- name: AnswerPermissionPrompt :one
-- Records a person's answer, only while the prompt waits.
UPDATE permission_prompts
SET answer = sqlc.arg(answer), answered_at = sqlc.arg(answered_at), answered_by = sqlc.arg(answered_by)
WHERE id = sqlc.arg(id) AND answered_at IS NULL
RETURNING *;

-- name: ListOpenPermissionPrompts :many
-- The prompts of a session still waiting on a person, oldest first.
SELECT * FROM permission_prompts
WHERE session_id = sqlc.arg(session_id) AND answered_at IS NULL
ORDER BY id;

-- name: DeliverPermissionAnswers :many
-- Hands over the answers to the session's prompts that are due, as
-- DeliverResolutions does.
UPDATE permission_prompts
SET delivered_at = COALESCE(delivered_at, sqlc.arg(now)), last_delivered_at = sqlc.arg(now), brief_id = sqlc.arg(brief_id)
WHERE session_id = sqlc.arg(session_id) AND answered_at IS NOT NULL AND acked_at IS NULL
  AND (delivered_at IS NULL OR last_delivered_at <= sqlc.arg(cutoff))
RETURNING *;

-- name: ListUndeliveredPermissionAnswers :many
-- What DeliverPermissionAnswers would hand over, for the preview.
SELECT * FROM permission_prompts
WHERE session_id = sqlc.arg(session_id) AND answered_at IS NOT NULL AND acked_at IS NULL
  AND (delivered_at IS NULL OR last_delivered_at <= sqlc.arg(cutoff))
ORDER BY id;

-- name: AckPermissionAnswers :execrows
UPDATE permission_prompts SET acked_at = sqlc.arg(now)
WHERE session_id = sqlc.arg(session_id) AND brief_id = sqlc.arg(brief_id) AND acked_at IS NULL AND delivered_at IS NOT NULL;

-- name: ListSessionPermissionPrompts :many
-- Every prompt of a session, newest first, for its page.
SELECT sqlc.embed(p), COALESCE(u.email, '') AS answered_by_email
FROM permission_prompts p
LEFT JOIN users u ON u.id = p.answered_by
WHERE p.session_id = sqlc.arg(session_id)
ORDER BY p.id DESC;
