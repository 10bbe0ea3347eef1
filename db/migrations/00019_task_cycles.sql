-- +goose Up
-- The cycle a task was last reported in: the id of the event that
-- started that cycle (the session's latest lifecycle.transition
-- user.message.created then, the one arrow out of IDLE), 0 before any.
-- A task of an earlier cycle no longer counts (CountTasks).
ALTER TABLE tasks ADD COLUMN cycle BIGINT NOT NULL DEFAULT 0;
UPDATE tasks SET cycle = COALESCE((
    SELECT MAX(c.id) FROM events c
    WHERE c.session_id = tasks.session_id AND c.kind = 'lifecycle.transition' AND c.ref = 'user.message.created'
      AND c.id < (SELECT COALESCE(MAX(e.id), 0) FROM events e
                  WHERE e.session_id = tasks.session_id AND e.kind = 'lifecycle.event' AND e.ref LIKE 'task.%'
                    AND json_valid(e.detail) AND json_extract(e.detail, '$.task') = tasks.task)), 0);

-- +goose Down
ALTER TABLE tasks DROP COLUMN cycle;
