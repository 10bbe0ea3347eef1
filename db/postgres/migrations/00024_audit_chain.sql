-- +goose Up
-- The timeline (events) and the activity record (admin_activity) are
-- append-only and hash-chained (db/chain): each row carries the hash of
-- the row before it in its table (prev_hash; 64 zeros for the first) and
-- its own hash, SHA-256 over that and its content. Rows that exist when
-- this migration runs are chained once, in id order, by the store as it
-- migrates (db/trail.go); until then their hashes are '' and nothing may
-- chain onto them.
ALTER TABLE events ADD COLUMN prev_hash TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN hash TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE admin_activity ADD COLUMN prev_hash TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE admin_activity ADD COLUMN hash TEXT COLLATE "C" NOT NULL DEFAULT '';

-- The rows still to chain, found at each start without reading the
-- table (empty once they are chained).
CREATE INDEX events_unchained ON events (id) WHERE hash = '';
CREATE INDEX admin_activity_unchained ON admin_activity (id) WHERE hash = '';

-- No two rows chain onto the same row: a fork cannot be stored, whatever
-- the isolation level of the transactions that try.
CREATE UNIQUE INDEX events_chain_link ON events (prev_hash) WHERE prev_hash <> '';
CREATE UNIQUE INDEX admin_activity_chain_link ON admin_activity (prev_hash) WHERE prev_hash <> '';

-- A new row comes after the last one and chains onto its hash (or the
-- genesis, 64 zeros, in an empty table); both hashes are 64 lowercase hex
-- digits. The check runs under a transaction-scoped advisory lock
-- ("mb.chain" in ASCII, one for both tables), so two transactions cannot
-- both see the same last row: the second waits for the first to end, then
-- reads the head it left. Madebook's own writes already run one at a time
-- (db/pg.go's writers' lock); this lock holds for any other writer too.
-- The row's own hash is checked by `madebook audit verify`, not here.
-- +goose StatementBegin
CREATE FUNCTION madebook_chain_append() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    head_id   BIGINT;
    head_hash TEXT;
BEGIN
    PERFORM pg_advisory_xact_lock(7881913302339643758);
    IF TG_TABLE_NAME = 'events' THEN
        SELECT id, hash INTO head_id, head_hash FROM events ORDER BY id DESC LIMIT 1;
    ELSE
        SELECT id, hash INTO head_id, head_hash FROM admin_activity ORDER BY id DESC LIMIT 1;
    END IF;
    IF NEW.hash !~ '^[0-9a-f]{64}$'
       OR NEW.prev_hash IS DISTINCT FROM COALESCE(head_hash, repeat('0', 64))
       OR NEW.id <= COALESCE(head_id, 0) THEN
        RAISE EXCEPTION '%_chain_broken: a row of % must chain onto the last one (db.AppendEvent, db.AppendActivity)',
            TG_TABLE_NAME, TG_TABLE_NAME;
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER events_chain_append BEFORE INSERT ON events
FOR EACH ROW EXECUTE FUNCTION madebook_chain_append();
CREATE TRIGGER admin_activity_chain_append BEFORE INSERT ON admin_activity
FOR EACH ROW EXECUTE FUNCTION madebook_chain_append();

-- Append-only: no row is ever changed or removed, nor the table emptied.
-- The one update allowed is the chaining of a row this migration found
-- (hash '' until then): once, setting only its two hashes.
-- +goose StatementBegin
CREATE FUNCTION madebook_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF OLD.hash = '' AND NEW.hash ~ '^[0-9a-f]{64}$' AND NEW.prev_hash ~ '^[0-9a-f]{64}$'
           AND to_jsonb(NEW) - 'prev_hash' - 'hash' = to_jsonb(OLD) - 'prev_hash' - 'hash' THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION '%_append_only: % is append-only: % refused', TG_TABLE_NAME, TG_TABLE_NAME, TG_OP;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
FOR EACH ROW EXECUTE FUNCTION madebook_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
FOR EACH STATEMENT EXECUTE FUNCTION madebook_append_only();
CREATE TRIGGER admin_activity_append_only BEFORE UPDATE OR DELETE ON admin_activity
FOR EACH ROW EXECUTE FUNCTION madebook_append_only();
CREATE TRIGGER admin_activity_no_truncate BEFORE TRUNCATE ON admin_activity
FOR EACH STATEMENT EXECUTE FUNCTION madebook_append_only();

-- +goose Down
DROP TRIGGER admin_activity_no_truncate ON admin_activity;
DROP TRIGGER admin_activity_append_only ON admin_activity;
DROP TRIGGER events_no_truncate ON events;
DROP TRIGGER events_append_only ON events;
DROP FUNCTION madebook_append_only();
DROP TRIGGER admin_activity_chain_append ON admin_activity;
DROP TRIGGER events_chain_append ON events;
DROP FUNCTION madebook_chain_append();
DROP INDEX admin_activity_chain_link;
DROP INDEX events_chain_link;
DROP INDEX admin_activity_unchained;
DROP INDEX events_unchained;
ALTER TABLE admin_activity DROP COLUMN hash;
ALTER TABLE admin_activity DROP COLUMN prev_hash;
ALTER TABLE events DROP COLUMN hash;
ALTER TABLE events DROP COLUMN prev_hash;
