-- A write the admin API was told failed (it timed out) must never commit later,
-- e.g. when a frozen server resumes and runs the COMMIT it had already received.
-- Each Sluice write sets `sluice.write_deadline` (a timestamptz the gateway
-- computed) for its transaction; these deferred triggers run inside COMMIT, just
-- before the commit record is written, and abort the transaction once the
-- server's own clock has passed that deadline. Writes without the setting (psql,
-- the seed) are not affected.

CREATE FUNCTION sluice_check_write_deadline() RETURNS trigger AS $$
DECLARE
    deadline text := current_setting('sluice.write_deadline', true);
BEGIN
    IF deadline IS NOT NULL AND deadline <> '' AND clock_timestamp() >= deadline::timestamptz THEN
        RAISE EXCEPTION 'sluice write deadline % passed before commit', deadline USING ERRCODE = 'SL001';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER rate_limit_rule_write_deadline
    AFTER INSERT OR UPDATE OR DELETE ON rate_limit_rule
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION sluice_check_write_deadline();

CREATE CONSTRAINT TRIGGER api_key_write_deadline
    AFTER INSERT OR UPDATE OR DELETE ON api_key
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION sluice_check_write_deadline();
