-- +goose Up
-- Two people for what matters: a mission may require two different leads
-- to resolve a gate, confirm a plan or clear a critical violation; and the
-- person who created an agent key never approves that key's work.
ALTER TABLE missions ADD COLUMN two_person BOOLEAN NOT NULL DEFAULT 0;
ALTER TABLE agent_keys ADD COLUMN created_by INTEGER REFERENCES users (id);

-- Each lead's approval of a gate's resolution, a plan or the clearing of a
-- critical violation. content is what was approved (the resolution and
-- instruction, the clear kind): approvals count together only when they
-- approve the same thing. An approval stands (settled_at NULL) until the
-- approvals take effect, or one that approves something else replaces
-- it; it is kept after, as the record of who approved.
CREATE TABLE approvals (
    id            INTEGER PRIMARY KEY,
    target        TEXT    NOT NULL CHECK (target IN ('decision', 'plan', 'violation')),
    target_id     INTEGER NOT NULL,
    session_id    TEXT    NOT NULL REFERENCES sessions (id),
    user_id       INTEGER NOT NULL REFERENCES users (id),
    content       TEXT    NOT NULL,
    note          TEXT    NOT NULL DEFAULT '',
    at            TEXT    NOT NULL,
    settled_at    TEXT
);
-- One standing approval per person and target: the database refuses the
-- same lead twice even if two requests race.
CREATE UNIQUE INDEX approvals_standing ON approvals (target, target_id, user_id) WHERE settled_at IS NULL;
CREATE INDEX approvals_standing_all ON approvals (target, target_id) WHERE settled_at IS NULL;

-- +goose Down
DROP TABLE approvals;
ALTER TABLE agent_keys DROP COLUMN created_by;
ALTER TABLE missions DROP COLUMN two_person;
