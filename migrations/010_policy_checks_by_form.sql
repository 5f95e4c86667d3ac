-- The rule tables check a policy's form, not its name (issue #39: adding a
-- policy touches src/policies/ only). 001 and 004 listed every policy in
-- CHECKs, so a new policy needed a migration before a rule of it could be
-- written. The application already validates each rule against the policy
-- registry where it is written (admin API, CLI, config seed) and again on
-- every read, where a row that fails (a hand edit, a policy this Sluice does
-- not know) is logged and skipped, never served. So the database keeps what
-- only it can guard for any policy: a policy that is a well-formed name, and
-- capacity / refill_per_second set together or not at all (which policies
-- keep them in columns is src/rules/rule-columns.ts's to say).
-- The dropped constraints carry the names PostgreSQL gave 001's and 004's
-- unnamed CHECKs; the rows they admitted all pass the new ones.

ALTER TABLE rate_limit_rule
    DROP CONSTRAINT IF EXISTS rate_limit_rule_policy_check,
    DROP CONSTRAINT IF EXISTS rate_limit_rule_check,
    DROP CONSTRAINT IF EXISTS rate_limit_rule_check1,
    ADD CONSTRAINT rate_limit_rule_policy_form CHECK (policy ~ '^[a-z][a-z0-9_]{0,63}$'),
    ADD CONSTRAINT rate_limit_rule_bucket_columns CHECK ((capacity IS NULL) = (refill_per_second IS NULL));

ALTER TABLE limit_override
    DROP CONSTRAINT IF EXISTS limit_override_policy_check,
    DROP CONSTRAINT IF EXISTS limit_override_check,
    DROP CONSTRAINT IF EXISTS limit_override_check1,
    ADD CONSTRAINT limit_override_policy_form CHECK (policy ~ '^[a-z][a-z0-9_]{0,63}$'),
    ADD CONSTRAINT limit_override_bucket_columns CHECK ((capacity IS NULL) = (refill_per_second IS NULL));
