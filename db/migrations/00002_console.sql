-- +goose Up
-- Console sign-ins. The cookie holds a random token; the row is keyed by
-- its SHA-256, so a copy of the database holds no live session.
CREATE TABLE web_sessions (
    id_hash      TEXT    PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id),
    csrf_token   TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    last_seen_at TEXT    NOT NULL
);
CREATE INDEX web_sessions_by_user ON web_sessions (user_id);

-- Failed sign-ins, for rate limiting per account and per address.
CREATE TABLE login_failures (
    id      INTEGER PRIMARY KEY,
    email   TEXT    NOT NULL,
    address TEXT    NOT NULL,
    at      TEXT    NOT NULL
);
CREATE INDEX login_failures_by_email ON login_failures (email, at);
CREATE INDEX login_failures_by_address ON login_failures (address, at);

-- What the Attention view lists: proposed plans and paused sessions.
CREATE INDEX plans_proposed ON plans (proposed_at) WHERE status = 'proposed';
CREATE INDEX sessions_paused ON sessions (paused_at) WHERE paused_at IS NOT NULL;

-- +goose Down
DROP INDEX sessions_paused;
DROP INDEX plans_proposed;
DROP TABLE login_failures;
DROP TABLE web_sessions;
