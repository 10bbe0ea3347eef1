-- What people mark on Attention items: claims, snoozes and
-- acknowledgements, each keyed as the queue names an item (kind, session,
-- ref). Each list is one query for the whole queue (narrowed to one
-- session when the filter names one); whether a mark counts for the item
-- now waiting (it was made at or after the item opened) is the service's
-- to say.

-- name: ListAttentionClaims :many
SELECT c.kind, c.session_id, c.ref, c.user_id, u.email, c.claimed_at
FROM attention_claims c
JOIN users u ON u.id = c.user_id
WHERE (CAST(sqlc.arg(session) AS TEXT) = '' OR c.session_id = sqlc.arg(session));

-- name: GetAttentionClaim :one
SELECT c.user_id, u.email, c.claimed_at
FROM attention_claims c
JOIN users u ON u.id = c.user_id
WHERE c.kind = sqlc.arg(kind) AND c.session_id = sqlc.arg(session_id) AND c.ref = sqlc.arg(ref);

-- name: InsertAttentionClaim :execrows
-- Claims an item no one had claimed, unless someone claimed it since the
-- caller looked (then nothing is written: of two people claiming at once,
-- one wins and the other hears who).
INSERT INTO attention_claims (kind, session_id, ref, user_id, claimed_at)
VALUES (sqlc.arg(kind), sqlc.arg(session_id), sqlc.arg(ref), sqlc.arg(user_id), sqlc.arg(claimed_at))
ON CONFLICT (kind, session_id, ref) DO NOTHING;

-- name: ReplaceAttentionClaim :execrows
-- Replaces the key's claim with a new one, only while it is still the one
-- the caller read (prev_claimed_at).
UPDATE attention_claims SET user_id = sqlc.arg(user_id), claimed_at = sqlc.arg(claimed_at)
WHERE kind = sqlc.arg(kind) AND session_id = sqlc.arg(session_id) AND ref = sqlc.arg(ref)
  AND claimed_at = CAST(sqlc.arg(prev_claimed_at) AS TEXT);

-- name: DeleteAttentionClaim :execrows
DELETE FROM attention_claims
WHERE kind = sqlc.arg(kind) AND session_id = sqlc.arg(session_id) AND ref = sqlc.arg(ref)
  AND claimed_at = CAST(sqlc.arg(claimed_at) AS TEXT);

-- name: ListAttentionSnoozes :many
-- The snoozes still running at now.
SELECT z.kind, z.session_id, z.ref, z.user_id, u.email, z.snoozed_at, z.snoozed_until
FROM attention_snoozes z
JOIN users u ON u.id = z.user_id
WHERE z.snoozed_until > CAST(sqlc.arg(now) AS TEXT)
  AND (CAST(sqlc.arg(session) AS TEXT) = '' OR z.session_id = sqlc.arg(session))
ORDER BY z.snoozed_until, u.email;

-- name: PutAttentionSnooze :exec
-- Snoozes an item for a person until a time, replacing their earlier
-- snooze of the same item.
INSERT INTO attention_snoozes (kind, session_id, ref, user_id, snoozed_at, snoozed_until)
VALUES (sqlc.arg(kind), sqlc.arg(session_id), sqlc.arg(ref), sqlc.arg(user_id), sqlc.arg(snoozed_at), sqlc.arg(snoozed_until))
ON CONFLICT (kind, session_id, ref, user_id) DO UPDATE
SET snoozed_at = excluded.snoozed_at, snoozed_until = excluded.snoozed_until;

-- name: EndAttentionSnooze :execrows
-- Ends a person's snooze of an item early: the one still running that was
-- made at or after the item opened.
DELETE FROM attention_snoozes
WHERE kind = sqlc.arg(kind) AND session_id = sqlc.arg(session_id) AND ref = sqlc.arg(ref) AND user_id = sqlc.arg(user_id)
  AND snoozed_until > CAST(sqlc.arg(now) AS TEXT) AND snoozed_at >= CAST(sqlc.arg(opened_at) AS TEXT);

-- name: ListAttentionAcks :many
SELECT a.kind, a.session_id, a.ref, a.user_id, u.email, a.acked_at
FROM attention_acks a
JOIN users u ON u.id = a.user_id
WHERE (CAST(sqlc.arg(session) AS TEXT) = '' OR a.session_id = sqlc.arg(session));

-- name: PutAttentionAck :exec
-- Acknowledges an item, replacing an acknowledgement of an earlier item
-- with the same key.
INSERT INTO attention_acks (kind, session_id, ref, user_id, acked_at)
VALUES (sqlc.arg(kind), sqlc.arg(session_id), sqlc.arg(ref), sqlc.arg(user_id), sqlc.arg(acked_at))
ON CONFLICT (kind, session_id, ref) DO UPDATE
SET user_id = excluded.user_id, acked_at = excluded.acked_at;
