-- +goose Up
-- An admin can switch a policy off and on again, and delete it. A disabled
-- policy trips nothing until it is enabled; a deleted one is kept, marked,
-- so that the violations it found (which reference it) stay readable, and
-- is listed no more.
ALTER TABLE policies ADD COLUMN disabled_at TEXT;
ALTER TABLE policies ADD COLUMN disabled_by INTEGER REFERENCES users (id);
ALTER TABLE policies ADD COLUMN deleted_at TEXT;
ALTER TABLE policies ADD COLUMN deleted_by INTEGER REFERENCES users (id);

-- +goose Down
ALTER TABLE policies DROP COLUMN deleted_by;
ALTER TABLE policies DROP COLUMN deleted_at;
ALTER TABLE policies DROP COLUMN disabled_by;
ALTER TABLE policies DROP COLUMN disabled_at;
