-- +goose Up
-- The approved plan whose stopping point an ask is. Until now an ask could
-- be a stopping point only on a run executing the plan (runs.plan_id); a
-- Claude Code session's calls are on its hook run, which executes no plan,
-- so the ask itself names the plan: answering it releases that option's
-- steps for the whole plan, on any run of the session. NULL: the ask is no
-- stopping point. (No REFERENCES, as runs.plan_id: the ledger sets it only
-- from the session's own approved plan.)
ALTER TABLE asks ADD COLUMN plan_id BIGINT;
UPDATE asks SET plan_id = (SELECT r.plan_id FROM runs r WHERE r.id = asks.run_id)
WHERE stopping_point IS NOT NULL;
-- The answers that release a plan's steps, read by plan on every
-- side-effecting call of a session with an approved plan.
CREATE INDEX asks_released_by_plan ON asks (plan_id, stopping_point, answer)
    WHERE plan_id IS NOT NULL AND stopping_point IS NOT NULL AND answered_at IS NOT NULL;

-- +goose Down
DROP INDEX asks_released_by_plan;
ALTER TABLE asks DROP COLUMN plan_id;
