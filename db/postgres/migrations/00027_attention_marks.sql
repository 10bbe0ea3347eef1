-- +goose Up
-- What people mark on an Attention item, keyed as the queue names an item
-- (its kind, its session and its ref), one row per key: a new mark on the
-- same key replaces the old one. A mark counts only for the item opened at
-- or before it (the mark's time >= the item's opened_at), so that a mark on
-- an earlier item with the same key (a session paused again, a task blocked
-- again) is not shown on the new one, and the answer that ends an item
-- ends its marks with it.
--
-- A claim: a person is on it ("I'm on it"), seen by everyone.
CREATE TABLE attention_claims (
    kind       TEXT COLLATE "C" NOT NULL,
    session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id),
    ref        TEXT COLLATE "C" NOT NULL,
    user_id    BIGINT NOT NULL REFERENCES users (id),
    claimed_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, session_id, ref)
);
-- A snooze: hidden from that person's queue until snoozed_until, while it
-- keeps blocking the agent; one row per item and person.
CREATE TABLE attention_snoozes (
    kind          TEXT COLLATE "C" NOT NULL,
    session_id    TEXT COLLATE "C" NOT NULL REFERENCES sessions (id),
    ref           TEXT COLLATE "C" NOT NULL,
    user_id       BIGINT NOT NULL REFERENCES users (id),
    snoozed_at    TEXT COLLATE "C" NOT NULL,
    snoozed_until TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, session_id, ref, user_id)
);
CREATE INDEX attention_snoozes_by_until ON attention_snoozes (snoozed_until);
-- An acknowledgement: a lead has seen it (a blocked task), and it stays
-- until the task moves.
CREATE TABLE attention_acks (
    kind       TEXT COLLATE "C" NOT NULL,
    session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id),
    ref        TEXT COLLATE "C" NOT NULL,
    user_id    BIGINT NOT NULL REFERENCES users (id),
    acked_at   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, session_id, ref)
);

-- +goose Down
DROP TABLE attention_acks;
DROP INDEX attention_snoozes_by_until;
DROP TABLE attention_snoozes;
DROP TABLE attention_claims;
