-- +goose Up
-- The cycle a task was last reported in: the id of the event that
-- started that cycle (the session's latest lifecycle.transition
-- user.message.created then, the one arrow out of IDLE), 0 before any.
-- A task of an earlier cycle no longer counts (CountTasks). (SQLite's
-- 00019 also fills it in for tasks reported before; a PostgreSQL database
-- begins at 00017 in the same release, so it has none.)
ALTER TABLE tasks ADD COLUMN cycle BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE tasks DROP COLUMN cycle;
