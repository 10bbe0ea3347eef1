-- +goose Up
-- Credentials you can manage: a personal token gets a name (a key has
-- one), and both get the first characters of their secret (prefix: enough
-- to tell two apart, far too few to guess the rest; '' for those made
-- before it was kept), an optional expiry (expires_at, NULL: never) and
-- the last time one was used (last_used_at, NULL: never; written in
-- batches, at most once a minute a credential). A token made before
-- tokens had names is named after the day it was made.
ALTER TABLE api_tokens ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE api_tokens ADD COLUMN prefix TEXT NOT NULL DEFAULT '';
ALTER TABLE api_tokens ADD COLUMN expires_at TEXT;
ALTER TABLE api_tokens ADD COLUMN last_used_at TEXT;
UPDATE api_tokens SET name = 'token ' || substr(created_at, 1, 10);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id, id);
ALTER TABLE agent_keys ADD COLUMN prefix TEXT NOT NULL DEFAULT '';
ALTER TABLE agent_keys ADD COLUMN expires_at TEXT;
ALTER TABLE agent_keys ADD COLUMN last_used_at TEXT;

-- +goose Down
ALTER TABLE agent_keys DROP COLUMN last_used_at;
ALTER TABLE agent_keys DROP COLUMN expires_at;
ALTER TABLE agent_keys DROP COLUMN prefix;
DROP INDEX api_tokens_by_user;
ALTER TABLE api_tokens DROP COLUMN last_used_at;
ALTER TABLE api_tokens DROP COLUMN expires_at;
ALTER TABLE api_tokens DROP COLUMN prefix;
ALTER TABLE api_tokens DROP COLUMN name;
