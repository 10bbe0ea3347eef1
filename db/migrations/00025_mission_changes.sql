-- +goose Up
-- A lead's change that lowers a protection of a two-person mission
-- (two_person or high_risk off, gate_ttl removed or raised) waits here
-- until a second, different lead approves it (then it is applied to the
-- mission as it is by then) or a lead rejects it. patch is the change as
-- governance.MissionPatch encodes it, validated; lowers the protections
-- it lowers, a JSON array of sentences; summary what it changes, as the
-- timeline says it.
CREATE TABLE mission_changes (
    id           INTEGER PRIMARY KEY,
    mission_id   INTEGER NOT NULL REFERENCES missions (id),
    patch        TEXT    NOT NULL,
    summary      TEXT    NOT NULL,
    lowers       TEXT    NOT NULL,
    note         TEXT    NOT NULL DEFAULT '',
    requested_by INTEGER NOT NULL REFERENCES users (id),
    requested_at TEXT    NOT NULL,
    status       TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied', 'rejected')),
    settled_by   INTEGER REFERENCES users (id),
    settled_at   TEXT,
    settle_note  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX mission_changes_by_mission ON mission_changes (mission_id, id);

-- A change as it is read: with its mission's slug, who asked for it and
-- what they are now (whether they can still stand behind it:
-- approval.VoidReason), and who settled it.
CREATE VIEW mission_change_rows AS
SELECT c.id, c.mission_id, m.slug AS mission_slug, c.patch, c.summary, c.lowers, c.note, c.requested_by,
       c.requested_at, c.status, c.settled_by, c.settled_at, c.settle_note,
       COALESCE(r.email, '') AS requested_email, CAST(r.id IS NOT NULL AS BOOLEAN) AS requester_exists,
       COALESCE(r.role, '') AS requester_role, CAST(r.disabled_at IS NOT NULL AS BOOLEAN) AS requester_disabled,
       COALESCE(s.email, '') AS settled_email
FROM mission_changes c
JOIN missions m ON m.id = c.mission_id
LEFT JOIN users r ON r.id = c.requested_by
LEFT JOIN users s ON s.id = c.settled_by;

-- +goose Down
DROP VIEW mission_change_rows;
DROP TABLE mission_changes;
