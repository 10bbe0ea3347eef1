-- +goose Up
-- The audit reports (seed 001) read only the rows they report on, or a
-- small index of them, never a whole ledger table.

-- stale-gates: open gates by age, so "opened before" is a range search that
-- reads only the stale ones (decisions_open is keyed by session first).
CREATE INDEX decisions_open_by_age ON decisions (opened_at) WHERE resolved_at IS NULL;

-- premature-side-effects: every answered ask with what the report needs of
-- it (its run, when it was answered, its id), so the report reads the asks
-- from this index alone and goes from each into tool_calls_side_effects.
CREATE INDEX asks_answered ON asks (run_id, answered_at, id) WHERE answered_at IS NOT NULL;

-- +goose Down
DROP INDEX asks_answered;
DROP INDEX decisions_open_by_age;
