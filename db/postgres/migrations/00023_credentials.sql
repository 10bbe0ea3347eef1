-- +goose Up
-- Credentials you can manage: a personal token gets a name (a key has
-- one), and both get the first characters of their secret (prefix: enough
-- to tell two apart, far too few to guess the rest; '' for those made
-- before it was kept), an optional expiry (expires_at, NULL: never) and
-- the last time one was used (last_used_at, NULL: never; written in
-- batches, at most once a minute a credential). A token made before
-- tokens had names is named after the day it was made. As SQLite's 00023.
ALTER TABLE api_tokens ADD COLUMN name TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE api_tokens ADD COLUMN prefix TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE api_tokens ADD COLUMN expires_at TEXT COLLATE "C";
ALTER TABLE api_tokens ADD COLUMN last_used_at TEXT COLLATE "C";
UPDATE api_tokens SET name = 'token ' || substr(created_at, 1, 10);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id, id);
ALTER TABLE agent_keys ADD COLUMN prefix TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE agent_keys ADD COLUMN expires_at TEXT COLLATE "C";
ALTER TABLE agent_keys ADD COLUMN last_used_at TEXT COLLATE "C";

-- The word to other replicas (topic auth) goes out when a credential
-- itself changes, not when its last-used time is written: those stamps
-- come every second, and each word wakes every replica's console streams.
DROP TRIGGER agent_keys_notify ON agent_keys;
CREATE TRIGGER agent_keys_notify AFTER UPDATE OF name, key_hash, revoked_at, expires_at, created_by OR DELETE ON agent_keys
FOR EACH STATEMENT EXECUTE FUNCTION madebook_notify_topic('auth');
DROP TRIGGER api_tokens_notify ON api_tokens;
CREATE TRIGGER api_tokens_notify AFTER UPDATE OF user_id, name, token_hash, revoked_at, expires_at OR DELETE ON api_tokens
FOR EACH STATEMENT EXECUTE FUNCTION madebook_notify_topic('auth');

-- +goose Down
DROP TRIGGER api_tokens_notify ON api_tokens;
CREATE TRIGGER api_tokens_notify AFTER UPDATE OR DELETE ON api_tokens
FOR EACH STATEMENT EXECUTE FUNCTION madebook_notify_topic('auth');
DROP TRIGGER agent_keys_notify ON agent_keys;
CREATE TRIGGER agent_keys_notify AFTER UPDATE OR DELETE ON agent_keys
FOR EACH STATEMENT EXECUTE FUNCTION madebook_notify_topic('auth');
ALTER TABLE agent_keys DROP COLUMN last_used_at;
ALTER TABLE agent_keys DROP COLUMN expires_at;
ALTER TABLE agent_keys DROP COLUMN prefix;
DROP INDEX api_tokens_by_user;
ALTER TABLE api_tokens DROP COLUMN last_used_at;
ALTER TABLE api_tokens DROP COLUMN expires_at;
ALTER TABLE api_tokens DROP COLUMN prefix;
ALTER TABLE api_tokens DROP COLUMN name;
