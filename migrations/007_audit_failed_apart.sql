-- Failed attempts (a role that does not allow the write, bad input, the store
-- away) are kept apart from the changes in the audit log's retention: each
-- outcome numbers its own entries (seq), and each append prunes only its own
-- outcome beyond its own cap (SLUICE_AUDIT_KEEP_ENTRIES for changes,
-- SLUICE_AUDIT_KEEP_FAILED for failed attempts), so a flood of refused writes
-- from a `read` token can never push a change out before its retention.

ALTER TABLE audit_log ADD COLUMN seq BIGINT;
UPDATE audit_log SET seq = numbered.n
    FROM (SELECT id, row_number() OVER (PARTITION BY outcome ORDER BY id) AS n FROM audit_log) numbered
    WHERE audit_log.id = numbered.id;
ALTER TABLE audit_log ALTER COLUMN seq SET NOT NULL;
CREATE INDEX audit_log_outcome_seq_idx ON audit_log (outcome, seq);

-- A token created or revoked by a write answered as failed must not commit
-- later either (migrations/003's check, which rules, keys and overrides have).
CREATE CONSTRAINT TRIGGER admin_token_write_deadline
    AFTER INSERT OR UPDATE OR DELETE ON admin_token
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION sluice_check_write_deadline();
