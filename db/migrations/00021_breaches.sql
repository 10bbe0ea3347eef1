-- +goose Up
-- A breach of a blocked scope: while a session had a blocked scope (an
-- open decision gate's), the agent's hook saw an allowed call change files
-- inside it. The breach is kept as reported, and it is a critical
-- violation of the session that no policy found: violations.policy_id
-- may be NULL, and violations.breach_id then names the breach (exactly
-- one of the two is set). The violation takes the one path every critical
-- violation takes: HARD_STOP, the Attention view, a person clears it.
CREATE TABLE scope_breaches (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    run_id      TEXT    NOT NULL REFERENCES runs (id),
    server      TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    tool_use_id TEXT    NOT NULL DEFAULT '',
    command     TEXT    NOT NULL DEFAULT '',
    files       TEXT    NOT NULL, -- JSON array of project-relative paths
    scope       TEXT    NOT NULL, -- JSON array: the blocked scope entries written into
    decisions   TEXT    NOT NULL, -- JSON array: the open gates (DEC-…) whose blocked scope holds a file
    detected_at TEXT    NOT NULL
);
-- Every row is a finding of premature-side-effects: the report reads the
-- table in order through this index.
CREATE INDEX scope_breaches_by_time ON scope_breaches (detected_at, id);
CREATE INDEX scope_breaches_by_session ON scope_breaches (session_id, id);

-- SQLite cannot drop a NOT NULL, so violations is rebuilt, rows and ids
-- kept. remediations.violation_id refers to it, so the rows are copied
-- aside and put back into the new table under the same name, with the
-- reference checked at the commit (defer_foreign_keys lasts until then):
-- a row that did not come back fails the migration.
PRAGMA defer_foreign_keys = ON;
CREATE TABLE violations_copy (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL,
    policy_id   INTEGER NOT NULL,
    policy      TEXT    NOT NULL,
    severity    TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    match       TEXT    NOT NULL,
    file        TEXT    NOT NULL,
    line        INTEGER NOT NULL,
    detected_at TEXT    NOT NULL,
    closed_at   TEXT,
    cleared_by  INTEGER,
    clear_kind  TEXT,
    clear_note  TEXT    NOT NULL
);
INSERT INTO violations_copy (id, session_id, policy_id, policy, severity, action, match, file, line, detected_at, closed_at,
                            cleared_by, clear_kind, clear_note)
SELECT id, session_id, policy_id, policy, severity, action, match, file, line, detected_at, closed_at,
       cleared_by, clear_kind, clear_note
FROM violations;
DELETE FROM violations;
DROP TABLE violations;
CREATE TABLE violations (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    -- The policy that found it; NULL for a breach of a blocked scope.
    policy_id   INTEGER REFERENCES policies (id),
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
    clear_note  TEXT    NOT NULL DEFAULT '',
    -- The breach of a blocked scope it is; NULL for a policy's finding.
    breach_id   INTEGER REFERENCES scope_breaches (id),
    CHECK ((policy_id IS NULL) = (breach_id IS NOT NULL))
);
INSERT INTO violations (id, session_id, policy_id, policy, severity, action, match, file, line, detected_at, closed_at,
                        cleared_by, clear_kind, clear_note)
SELECT id, session_id, policy_id, policy, severity, action, match, file, line, detected_at, closed_at,
       cleared_by, clear_kind, clear_note
FROM violations_copy;
DROP TABLE violations_copy;
CREATE INDEX violations_open ON violations (session_id, detected_at) WHERE closed_at IS NULL;
CREATE UNIQUE INDEX violations_by_breach ON violations (breach_id) WHERE breach_id IS NOT NULL;

-- +goose Down
-- The breaches' violations go with them; every other row is kept.
PRAGMA defer_foreign_keys = ON;
DELETE FROM remediations WHERE violation_id IN (SELECT id FROM violations WHERE breach_id IS NOT NULL);
CREATE TABLE violations_copy (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL,
    policy_id   INTEGER NOT NULL,
    policy      TEXT    NOT NULL,
    severity    TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    match       TEXT    NOT NULL,
    file        TEXT    NOT NULL,
    line        INTEGER NOT NULL,
    detected_at TEXT    NOT NULL,
    closed_at   TEXT,
    cleared_by  INTEGER,
    clear_kind  TEXT,
    clear_note  TEXT    NOT NULL
);
INSERT INTO violations_copy (id, session_id, policy_id, policy, severity, action, match, file, line, detected_at, closed_at,
                            cleared_by, clear_kind, clear_note)
SELECT id, session_id, policy_id, policy, severity, action, match, file, line, detected_at, closed_at,
       cleared_by, clear_kind, clear_note
FROM violations WHERE policy_id IS NOT NULL;
DELETE FROM violations;
DROP TABLE violations;
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
INSERT INTO violations SELECT * FROM violations_copy;
DROP TABLE violations_copy;
CREATE INDEX violations_open ON violations (session_id, detected_at) WHERE closed_at IS NULL;
DROP TABLE scope_breaches;
