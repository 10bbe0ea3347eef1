-- +goose Up
-- A high policy violation and a departure from an enforced architecture
-- rule raise a required remediation (source violation, rule): the
-- remediation names what raised it and closes with it: at most one per
-- violation, and one open at a time per deviation (a deviation whose rule
-- is no longer enforced closes its remediation, and raises another if
-- the rule is enforced again). Adding the CHECK on source needs the
-- table rebuilt (SQLite adds no constraint to a table); nothing refers to
-- remediations, so it is dropped and recreated in one transaction, rows,
-- ids and indexes kept.
CREATE TABLE remediations_new (
    id                INTEGER PRIMARY KEY,
    session_id        TEXT    NOT NULL REFERENCES sessions (id),
    severity          TEXT    NOT NULL CHECK (severity IN ('required', 'advisory')),
    instruction       TEXT    NOT NULL,
    files             TEXT    NOT NULL, -- JSON array
    -- Who raised it: a person; a rule (an enforced rule's deviation,
    -- deviation_id); a violation (a high policy violation, violation_id);
    -- a collision between sessions.
    source            TEXT    NOT NULL CHECK (source IN ('person', 'rule', 'violation', 'collision')),
    created_at        TEXT    NOT NULL,
    created_by        INTEGER REFERENCES users (id),
    delivered_at      TEXT,
    closed_at         TEXT,
    closed_by         INTEGER REFERENCES users (id),
    close_note        TEXT    NOT NULL DEFAULT '',
    last_delivered_at TEXT,
    brief_id          TEXT,
    acked_at          TEXT,
    violation_id      INTEGER REFERENCES violations (id),
    deviation_id      INTEGER REFERENCES deviations (id),
    CHECK ((source = 'violation') = (violation_id IS NOT NULL)),
    CHECK ((source = 'rule') = (deviation_id IS NOT NULL))
);
INSERT INTO remediations_new (id, session_id, severity, instruction, files, source, created_at, created_by, delivered_at,
                              closed_at, closed_by, close_note, last_delivered_at, brief_id, acked_at)
SELECT id, session_id, severity, instruction, files, source, created_at, created_by, delivered_at,
       closed_at, closed_by, close_note, last_delivered_at, brief_id, acked_at
FROM remediations;
DROP TABLE remediations;
ALTER TABLE remediations_new RENAME TO remediations;
CREATE INDEX remediations_open ON remediations (session_id, created_at) WHERE closed_at IS NULL;
CREATE INDEX remediations_unacked ON remediations (session_id, last_delivered_at)
    WHERE closed_at IS NULL AND acked_at IS NULL;
CREATE INDEX remediations_unacked_delivered ON remediations (last_delivered_at)
    WHERE delivered_at IS NOT NULL AND acked_at IS NULL;
CREATE UNIQUE INDEX remediations_by_violation ON remediations (violation_id) WHERE violation_id IS NOT NULL;
CREATE INDEX remediations_by_deviation ON remediations (deviation_id) WHERE deviation_id IS NOT NULL;

-- A deviation a person closed (by closing the remediation it raised)
-- names that person; one a later change no longer has is closed by no one.
ALTER TABLE deviations ADD COLUMN closed_by INTEGER REFERENCES users (id);

-- +goose Down
ALTER TABLE deviations DROP COLUMN closed_by;
CREATE TABLE remediations_old (
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
    close_note   TEXT    NOT NULL DEFAULT '',
    last_delivered_at TEXT,
    brief_id     TEXT,
    acked_at     TEXT
);
INSERT INTO remediations_old (id, session_id, severity, instruction, files, source, created_at, created_by, delivered_at,
                              closed_at, closed_by, close_note, last_delivered_at, brief_id, acked_at)
SELECT id, session_id, severity, instruction, files, source, created_at, created_by, delivered_at,
       closed_at, closed_by, close_note, last_delivered_at, brief_id, acked_at
FROM remediations;
DROP TABLE remediations;
ALTER TABLE remediations_old RENAME TO remediations;
CREATE INDEX remediations_open ON remediations (session_id, created_at) WHERE closed_at IS NULL;
CREATE INDEX remediations_unacked ON remediations (session_id, last_delivered_at)
    WHERE closed_at IS NULL AND acked_at IS NULL;
CREATE INDEX remediations_unacked_delivered ON remediations (last_delivered_at)
    WHERE delivered_at IS NOT NULL AND acked_at IS NULL;
