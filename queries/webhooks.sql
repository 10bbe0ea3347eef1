-- name: CreateWebhook :one
INSERT INTO webhooks (url, secret, events, created_at, created_by)
VALUES (sqlc.arg(url), sqlc.arg(secret), sqlc.arg(events), sqlc.arg(created_at), sqlc.narg(created_by))
RETURNING *;

-- name: ListWebhooks :many
-- The endpoints not removed, oldest first, with who added them.
SELECT w.id, w.url, w.events, w.created_at, COALESCE(u.email, '') AS created_by_email
FROM webhooks w LEFT JOIN users u ON u.id = w.created_by
WHERE w.removed_at IS NULL
ORDER BY w.id;

-- name: ListWebhookSubscriptions :many
-- What the outbox writer needs of each endpoint not removed.
SELECT id, events FROM webhooks WHERE removed_at IS NULL ORDER BY id;

-- name: GetWebhookTarget :one
-- Where and how a sender sends an endpoint's notifications.
SELECT id, url, secret, removed_at FROM webhooks WHERE id = sqlc.arg(id);

-- name: GetWebhook :one
-- An endpoint not removed, with who added it.
SELECT w.id, w.url, w.events, w.created_at, COALESCE(u.email, '') AS created_by_email
FROM webhooks w LEFT JOIN users u ON u.id = w.created_by
WHERE w.id = sqlc.arg(id) AND w.removed_at IS NULL;

-- name: RemoveWebhook :execrows
UPDATE webhooks SET removed_at = sqlc.arg(removed_at) WHERE id = sqlc.arg(id) AND removed_at IS NULL;

-- name: AbandonWebhookOutbox :exec
-- A removed endpoint's notifications not yet sent are given up.
UPDATE outbox SET gave_up_at = sqlc.arg(gave_up_at), last_error = 'endpoint removed'
WHERE webhook_id = sqlc.arg(webhook_id) AND delivered_at IS NULL AND gave_up_at IS NULL;

-- name: AddOutbox :one
INSERT INTO outbox (webhook_id, event, payload, created_at, next_attempt_at)
VALUES (sqlc.arg(webhook_id), sqlc.arg(event), sqlc.arg(payload), sqlc.arg(created_at), sqlc.arg(created_at))
RETURNING id;

-- name: ClaimOutbox :many
-- Claims up to lim due rows: moving next_attempt_at to the lease's end
-- takes them out of every other sender's claim until it runs out. The
-- WHERE guard is the claim: a row another sender claimed first is no
-- longer due.
UPDATE outbox SET next_attempt_at = sqlc.arg(lease_until), attempts = attempts + 1
WHERE id IN (SELECT o.id FROM outbox o
             WHERE o.delivered_at IS NULL AND o.gave_up_at IS NULL AND o.next_attempt_at <= sqlc.arg(now)
             ORDER BY o.next_attempt_at, o.id LIMIT CAST(sqlc.arg(lim) AS BIGINT))
  AND delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= sqlc.arg(now)
RETURNING id, webhook_id, event, payload, created_at, attempts;

-- name: MarkOutboxDelivered :execrows
UPDATE outbox SET delivered_at = sqlc.arg(delivered_at), last_status = sqlc.arg(status), last_error = NULL
WHERE id = sqlc.arg(id) AND delivered_at IS NULL;

-- name: MarkOutboxFailed :execrows
-- Records a failed attempt and when to try again; only the sender whose
-- claim is the latest (attempts unchanged since) records it.
UPDATE outbox SET last_status = sqlc.narg(status), last_error = sqlc.arg(error), next_attempt_at = sqlc.arg(next_attempt_at)
WHERE id = sqlc.arg(id) AND attempts = sqlc.arg(attempts) AND delivered_at IS NULL AND gave_up_at IS NULL;

-- name: GiveUpOutbox :execrows
UPDATE outbox SET last_status = sqlc.narg(status), last_error = sqlc.arg(error), gave_up_at = sqlc.arg(gave_up_at)
WHERE id = sqlc.arg(id) AND attempts = sqlc.arg(attempts) AND delivered_at IS NULL AND gave_up_at IS NULL;

-- name: NextOutboxDue :one
-- When the earliest row still to send is due; '' when none is.
SELECT CAST(COALESCE(MIN(next_attempt_at), '') AS TEXT) FROM outbox WHERE delivered_at IS NULL AND gave_up_at IS NULL;

-- name: ListWebhookDeliveries :many
-- An endpoint's newest notifications, sent or not.
SELECT id, event, created_at, attempts, next_attempt_at, delivered_at, last_status, last_error, gave_up_at
FROM outbox WHERE webhook_id = sqlc.arg(webhook_id)
ORDER BY id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);
