-- +goose Up
-- Change evaluation: what a session's change trips, computed by
-- Madebook from what the agent reports, never the agent's own verdict.

CREATE TABLE policies (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    severity   TEXT    NOT NULL CHECK (severity IN ('critical', 'high', 'medium', 'low')),
    kind       TEXT    NOT NULL CHECK (kind IN ('content_regex', 'path_glob', 'dependency')),
    pattern    TEXT    NOT NULL,
    action     TEXT    NOT NULL CHECK (action IN ('violation', 'block_merge')),
    builtin    BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TEXT    NOT NULL,
    created_by INTEGER REFERENCES users (id)
);

-- Settings Madebook keeps about itself, e.g. that the default policies
-- were installed once (so deleting them does not bring them back).
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- The session's latest change report: each report replaces the last.
CREATE TABLE changes (
    session_id      TEXT    PRIMARY KEY REFERENCES sessions (id),
    reported_at     TEXT    NOT NULL,
    files           TEXT    NOT NULL, -- JSON array of changed paths
    lines           INTEGER NOT NULL,
    dependencies    TEXT    NOT NULL, -- JSON array
    symbols_changed TEXT    NOT NULL, -- JSON array
    symbols_used    TEXT    NOT NULL, -- JSON array
    risk_score      INTEGER NOT NULL,
    risk_band       TEXT    NOT NULL,
    risk_gate       TEXT    NOT NULL,
    risk_factors    TEXT    NOT NULL  -- JSON array of {name, points, detail}
);

-- The symbols each session's latest change changed and builds against,
-- for collisions.
CREATE TABLE change_symbols (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    kind       TEXT NOT NULL CHECK (kind IN ('changed', 'used')),
    symbol     TEXT NOT NULL,
    PRIMARY KEY (session_id, kind, symbol)
);
CREATE INDEX change_symbols_by_symbol ON change_symbols (kind, symbol);

CREATE TABLE violations (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    policy_id   INTEGER NOT NULL REFERENCES policies (id),
    policy      TEXT    NOT NULL,
    severity    TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    match       TEXT    NOT NULL, -- what matched, never the secret itself
    file        TEXT    NOT NULL,
    line        INTEGER NOT NULL,
    detected_at TEXT    NOT NULL,
    -- Closed by a later change that no longer has it (not for critical),
    -- or cleared by a person.
    closed_at   TEXT,
    cleared_by  INTEGER REFERENCES users (id),
    clear_kind  TEXT    CHECK (clear_kind IN ('fixed', 'false_positive')),
    clear_note  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX violations_open ON violations (session_id, detected_at) WHERE closed_at IS NULL;

CREATE TABLE rules (
    id         INTEGER PRIMARY KEY,
    concern    TEXT    NOT NULL,
    chosen     TEXT    NOT NULL,
    departures TEXT    NOT NULL, -- JSON array
    support    INTEGER NOT NULL CHECK (support > 0),
    total      INTEGER NOT NULL CHECK (total >= support),
    enforced   BOOLEAN NOT NULL,
    created_at TEXT    NOT NULL,
    created_by INTEGER REFERENCES users (id)
);

CREATE TABLE deviations (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    rule_id     INTEGER NOT NULL REFERENCES rules (id),
    departure   TEXT    NOT NULL,
    files       TEXT    NOT NULL, -- JSON array
    detected_at TEXT    NOT NULL,
    closed_at   TEXT
);
CREATE INDEX deviations_open ON deviations (session_id, detected_at) WHERE closed_at IS NULL;

CREATE TABLE breaches (
    id           INTEGER PRIMARY KEY,
    session_id   TEXT    NOT NULL REFERENCES sessions (id),
    clause_index INTEGER NOT NULL,
    kind         TEXT    NOT NULL,
    value        TEXT    NOT NULL,
    found        TEXT    NOT NULL, -- JSON array
    count        INTEGER NOT NULL,
    detected_at  TEXT    NOT NULL,
    closed_at    TEXT
);
CREATE INDEX breaches_open ON breaches (session_id, detected_at) WHERE closed_at IS NULL;

-- Session A changed a symbol session B builds against.
CREATE TABLE collisions (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id), -- A, who changed it
    other_session TEXT NOT NULL REFERENCES sessions (id), -- B, who builds on it
    symbol        TEXT NOT NULL,
    detected_at   TEXT NOT NULL,
    closed_at     TEXT
);
CREATE INDEX collisions_open ON collisions (session_id, detected_at) WHERE closed_at IS NULL;
CREATE UNIQUE INDEX collisions_once ON collisions (session_id, other_session, symbol) WHERE closed_at IS NULL;

CREATE TABLE evidence (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    kind        TEXT    NOT NULL,
    passed      BOOLEAN NOT NULL,
    detail      TEXT    NOT NULL DEFAULT '',
    reported_at TEXT    NOT NULL
);
CREATE INDEX evidence_by_session ON evidence (session_id, kind, reported_at);

-- +goose Down
DROP TABLE evidence;
DROP TABLE collisions;
DROP TABLE breaches;
DROP TABLE deviations;
DROP TABLE rules;
DROP TABLE violations;
DROP TABLE change_symbols;
DROP TABLE changes;
DROP TABLE settings;
DROP TABLE policies;
