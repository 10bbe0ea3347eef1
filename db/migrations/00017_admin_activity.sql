-- +goose Up
-- Every admin action, who did it, when, and what it changed: written in
-- the transaction of the change itself, so neither exists without the
-- other. before_json and after_json are JSON objects (NULL where there is
-- nothing: before a creation, after a deletion) and never hold a secret.
-- The id only grows (AUTOINCREMENT): it is the cursor of the list.
CREATE TABLE admin_activity (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    target      TEXT NOT NULL,
    before_json TEXT,
    after_json  TEXT
);

-- +goose Down
DROP TABLE admin_activity;
