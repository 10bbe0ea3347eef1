-- +goose Up
-- The timeline (events) and the activity record (admin_activity) are
-- append-only and hash-chained (db/chain): each row carries the hash of
-- the row before it in its table (prev_hash; 64 zeros for the first) and
-- its own hash, SHA-256 over that and its content. Rows that exist when
-- this migration runs are chained once, in id order, by the store as it
-- migrates (db/trail.go); until then their hashes are '' and nothing may
-- chain onto them.
ALTER TABLE events ADD COLUMN prev_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN hash TEXT NOT NULL DEFAULT '';
ALTER TABLE admin_activity ADD COLUMN prev_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE admin_activity ADD COLUMN hash TEXT NOT NULL DEFAULT '';

-- The rows still to chain, found at each start without reading the
-- table (empty once they are chained).
CREATE INDEX events_unchained ON events (id) WHERE hash = '';
CREATE INDEX admin_activity_unchained ON admin_activity (id) WHERE hash = '';

-- No two rows chain onto the same row: a fork cannot be stored.
CREATE UNIQUE INDEX events_chain_link ON events (prev_hash) WHERE prev_hash <> '';
CREATE UNIQUE INDEX admin_activity_chain_link ON admin_activity (prev_hash) WHERE prev_hash <> '';

-- A new row comes after the last one and chains onto its hash (or the
-- genesis, 64 zeros, in an empty table); both hashes are 64 lowercase hex
-- digits. SQLite cannot compute SHA-256, so the row's own hash is checked
-- by `madebook audit verify`, not here.
-- +goose StatementBegin
CREATE TRIGGER events_chain_append BEFORE INSERT ON events
WHEN length(NEW.hash) <> 64 OR NEW.hash GLOB '*[^0-9a-f]*'
  OR NEW.prev_hash IS NOT COALESCE((SELECT hash FROM events ORDER BY id DESC LIMIT 1),
                                   '0000000000000000000000000000000000000000000000000000000000000000')
  OR NEW.id <= COALESCE((SELECT MAX(id) FROM events), 0)
BEGIN
    SELECT RAISE(ABORT, 'events_chain_broken: a timeline event must chain onto the last one (db.AppendEvent)');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER admin_activity_chain_append BEFORE INSERT ON admin_activity
WHEN length(NEW.hash) <> 64 OR NEW.hash GLOB '*[^0-9a-f]*'
  OR NEW.prev_hash IS NOT COALESCE((SELECT hash FROM admin_activity ORDER BY id DESC LIMIT 1),
                                   '0000000000000000000000000000000000000000000000000000000000000000')
  OR NEW.id <= COALESCE((SELECT MAX(id) FROM admin_activity), 0)
BEGIN
    SELECT RAISE(ABORT, 'admin_activity_chain_broken: an activity entry must chain onto the last one (db.AppendActivity)');
END;
-- +goose StatementEnd

-- Append-only: no row is ever changed or removed. The one update allowed
-- is the chaining of a row this migration found (hash '' until then):
-- once, setting only its two hashes.
-- +goose StatementBegin
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
WHEN NOT (OLD.hash = '' AND length(NEW.hash) = 64 AND length(NEW.prev_hash) = 64
      AND NEW.id IS OLD.id AND NEW.session_id IS OLD.session_id AND NEW.at IS OLD.at AND NEW.actor IS OLD.actor
      AND NEW.kind IS OLD.kind AND NEW.ref IS OLD.ref AND NEW.detail IS OLD.detail)
BEGIN
    SELECT RAISE(ABORT, 'events_append_only: the timeline is append-only: an event cannot be changed');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'events_append_only: the timeline is append-only: an event cannot be deleted');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER admin_activity_append_only_update BEFORE UPDATE ON admin_activity
WHEN NOT (OLD.hash = '' AND length(NEW.hash) = 64 AND length(NEW.prev_hash) = 64
      AND NEW.id IS OLD.id AND NEW.at IS OLD.at AND NEW.actor IS OLD.actor AND NEW.action IS OLD.action
      AND NEW.target IS OLD.target AND NEW.before_json IS OLD.before_json AND NEW.after_json IS OLD.after_json)
BEGIN
    SELECT RAISE(ABORT, 'admin_activity_append_only: the activity record is append-only: an entry cannot be changed');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER admin_activity_append_only_delete BEFORE DELETE ON admin_activity
BEGIN
    SELECT RAISE(ABORT, 'admin_activity_append_only: the activity record is append-only: an entry cannot be deleted');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER admin_activity_append_only_delete;
DROP TRIGGER admin_activity_append_only_update;
DROP TRIGGER events_append_only_delete;
DROP TRIGGER events_append_only_update;
DROP TRIGGER admin_activity_chain_append;
DROP TRIGGER events_chain_append;
DROP INDEX admin_activity_chain_link;
DROP INDEX events_chain_link;
DROP INDEX admin_activity_unchained;
DROP INDEX events_unchained;
ALTER TABLE admin_activity DROP COLUMN hash;
ALTER TABLE admin_activity DROP COLUMN prev_hash;
ALTER TABLE events DROP COLUMN hash;
ALTER TABLE events DROP COLUMN prev_hash;
