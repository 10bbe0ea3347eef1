-- +goose Up
-- Times are RFC 3339 UTC text with a fixed-width fraction
-- (2026-11-29T12:00:00.000000Z), so that text order is time order.
-- Lists are JSON arrays encoded and decoded in Go.

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    email         TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('admin', 'lead', 'viewer')),
    disabled_at   TEXT,
    created_at    TEXT    NOT NULL
);

CREATE TABLE api_tokens (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id),
    token_hash TEXT    NOT NULL UNIQUE,
    created_at TEXT    NOT NULL,
    revoked_at TEXT
);

CREATE TABLE agent_keys (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    key_hash   TEXT    NOT NULL UNIQUE,
    created_at TEXT    NOT NULL,
    revoked_at TEXT
);

CREATE TABLE missions (
    id         INTEGER PRIMARY KEY,
    slug       TEXT    NOT NULL UNIQUE,
    title      TEXT    NOT NULL,
    text       TEXT    NOT NULL,
    high_risk  BOOLEAN NOT NULL,
    evidence   TEXT    NOT NULL, -- JSON array of required evidence kinds
    contract   TEXT    NOT NULL, -- JSON array of {kind, value} clauses
    created_by INTEGER REFERENCES users (id),
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
);

CREATE TABLE sessions (
    id            TEXT    PRIMARY KEY,
    mission_id    INTEGER NOT NULL REFERENCES missions (id),
    agent_key_id  INTEGER NOT NULL REFERENCES agent_keys (id),
    agent         TEXT    NOT NULL,
    title         TEXT    NOT NULL,
    lifecycle     TEXT    NOT NULL,
    paused_at     TEXT,
    paused_by     INTEGER REFERENCES users (id),
    pause_reason  TEXT    NOT NULL DEFAULT '',
    last_brief_at TEXT,
    created_at    TEXT    NOT NULL
);
CREATE INDEX sessions_by_key ON sessions (agent_key_id, created_at);
CREATE INDEX sessions_by_mission ON sessions (mission_id, created_at);

CREATE TABLE plans (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    summary     TEXT    NOT NULL,
    body        TEXT    NOT NULL, -- JSON {initial_steps, stopping_points} as proposed
    status      TEXT    NOT NULL CHECK (status IN ('proposed', 'approved', 'rejected', 'superseded')),
    proposed_at TEXT    NOT NULL,
    decided_at  TEXT,
    decided_by  INTEGER REFERENCES users (id),
    note        TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX plans_by_session ON plans (session_id, id);

CREATE TABLE decisions (
    id            INTEGER PRIMARY KEY,
    ref           TEXT    NOT NULL UNIQUE,
    session_id    TEXT    NOT NULL REFERENCES sessions (id),
    title         TEXT    NOT NULL,
    question      TEXT    NOT NULL,
    proposal      TEXT    NOT NULL,
    blocked_scope TEXT    NOT NULL, -- JSON array, at most 20 entries
    allowed_scope TEXT    NOT NULL, -- JSON array, at most 20 entries
    opened_at     TEXT    NOT NULL,
    resolution    TEXT    NOT NULL DEFAULT '',
    instruction   TEXT    NOT NULL DEFAULT '',
    resolved_at   TEXT,
    resolved_by   INTEGER REFERENCES users (id),
    delivered_at  TEXT,
    CHECK ((resolved_at IS NULL) = (resolution = '' AND instruction = '')),
    CHECK (delivered_at IS NULL OR resolved_at IS NOT NULL)
);
CREATE INDEX decisions_open ON decisions (session_id, opened_at) WHERE resolved_at IS NULL;
CREATE INDEX decisions_undelivered ON decisions (session_id, resolved_at) WHERE resolved_at IS NOT NULL AND delivered_at IS NULL;

CREATE TABLE remediations (
    id           INTEGER PRIMARY KEY,
    session_id   TEXT    NOT NULL REFERENCES sessions (id),
    severity     TEXT    NOT NULL CHECK (severity IN ('required', 'advisory')),
    instruction  TEXT    NOT NULL,
    files        TEXT    NOT NULL, -- JSON array
    source       TEXT    NOT NULL, -- who raised it: person, rule, violation, collision
    created_at   TEXT    NOT NULL,
    created_by   INTEGER REFERENCES users (id),
    delivered_at TEXT,
    closed_at    TEXT,
    closed_by    INTEGER REFERENCES users (id),
    close_note   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX remediations_open ON remediations (session_id, created_at) WHERE closed_at IS NULL;

-- The timeline: every event an agent reported and every action a person took.
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES sessions (id),
    at         TEXT    NOT NULL,
    actor      TEXT    NOT NULL, -- "agent:NAME" or "person:EMAIL"
    kind       TEXT    NOT NULL, -- e.g. decision.opened, decision.resolved, session.paused
    ref        TEXT    NOT NULL DEFAULT '',
    detail     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX events_by_session ON events (session_id, id);

-- +goose Down
DROP TABLE events;
DROP TABLE remediations;
DROP TABLE decisions;
DROP TABLE plans;
DROP TABLE sessions;
DROP TABLE missions;
DROP TABLE agent_keys;
DROP TABLE api_tokens;
DROP TABLE users;
