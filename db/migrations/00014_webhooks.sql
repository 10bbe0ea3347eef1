-- +goose Up
-- Notifications: the webhook endpoints admins add, and the outbox each
-- notification is written to in the same transaction as what caused it,
-- so that none is lost across a restart. A sender claims due rows by
-- moving next_attempt_at forward (a lease), POSTs them signed with the
-- endpoint's secret, and records the outcome.

CREATE TABLE webhooks (
    id         INTEGER PRIMARY KEY,
    url        TEXT    NOT NULL,
    -- The HMAC key deliveries are signed with: kept to sign, never shown
    -- again after the endpoint is created.
    secret     TEXT    NOT NULL,
    events     TEXT    NOT NULL, -- JSON array of notification events
    created_at TEXT    NOT NULL,
    created_by INTEGER REFERENCES users (id),
    -- Set when an admin removes the endpoint: its history stays, nothing
    -- more is sent to it.
    removed_at TEXT
);

CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY,
    webhook_id      INTEGER NOT NULL REFERENCES webhooks (id),
    event           TEXT    NOT NULL CHECK (event IN ('attention.created', 'decision.expired', 'hard_stop')),
    payload         TEXT    NOT NULL, -- the exact JSON body to send
    created_at      TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    -- When the row is next due; a sender's claim moves it forward, so a
    -- claimed row is not due again until its lease runs out.
    next_attempt_at TEXT    NOT NULL,
    delivered_at    TEXT,
    last_status     INTEGER, -- the endpoint's last HTTP status; NULL: no answer
    last_error      TEXT,
    gave_up_at      TEXT
);

-- What a sender claims: the rows still to send, by when they are due.
CREATE INDEX outbox_due ON outbox (next_attempt_at)
    WHERE delivered_at IS NULL AND gave_up_at IS NULL;
-- An endpoint's recent deliveries, newest first.
CREATE INDEX outbox_webhook ON outbox (webhook_id, id);

-- +goose Down
DROP INDEX outbox_webhook;
DROP INDEX outbox_due;
DROP TABLE outbox;
DROP TABLE webhooks;
