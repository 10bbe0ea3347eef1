-- +goose Up
-- A session's agent is the name of the agent key that opened it: the one
-- name no agent can choose. What an agent calls itself is kept apart, as
-- agent_label, shown beside the key's name and never instead of it.
-- Sessions opened before keep their claimed name as their label (when it
-- differs from the key's) and take the key's name as their agent.
ALTER TABLE sessions ADD COLUMN agent_label TEXT NOT NULL DEFAULT '';
UPDATE sessions
SET agent_label = agent
WHERE agent <> (SELECT k.name FROM agent_keys k WHERE k.id = sessions.agent_key_id);
UPDATE sessions
SET agent = (SELECT k.name FROM agent_keys k WHERE k.id = sessions.agent_key_id);

-- +goose Down
UPDATE sessions SET agent = agent_label WHERE agent_label <> '';
ALTER TABLE sessions DROP COLUMN agent_label;
