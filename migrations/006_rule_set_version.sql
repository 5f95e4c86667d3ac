-- The rule-set version: one number, raised by every change to what instances
-- enforce or accept (rules, overrides, API keys, admin tokens), in the same
-- transaction as the change (triggers, so psql edits count too), once per
-- transaction (an upsert fires both INSERT and UPDATE statement triggers; a
-- statement that changed no row raises it too: harmless, the number only has
-- to grow). Concurrent writers queue on its one row, so versions follow
-- commit order. The new version is announced as {"kind":"version",
-- "version":N} by a deferred trigger, at commit, so after the row
-- notifications (002, 004) of every statement it covers (equal payloads are
-- sent once): an instance that has applied everything heard before it has
-- applied version N, and says so on the operator's page and in /readyz.

CREATE TABLE rule_set_version (
    only_row  BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    version   BIGINT  NOT NULL CHECK (version >= 0),
    -- The transaction that raised it last: a second trigger in it does nothing.
    raised_by BIGINT  NULL,
    -- Names this store: versions compare only between instances reading the same one, whatever address they reach it by.
    store_id  TEXT    NOT NULL DEFAULT gen_random_uuid()::text
);
INSERT INTO rule_set_version (only_row, version) VALUES (true, 0);

CREATE FUNCTION sluice_raise_version() RETURNS trigger AS $$
BEGIN
    UPDATE rule_set_version SET version = version + 1, raised_by = txid_current()
        WHERE raised_by IS DISTINCT FROM txid_current();
    -- A TRUNCATE has no row trigger to announce it (listeners reload everything anyway).
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('sluice_changes', json_build_object('kind', 'version', 'version', (SELECT version FROM rule_set_version))::text);
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION sluice_announce_version() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('sluice_changes', json_build_object('kind', 'version', 'version', (SELECT version FROM rule_set_version))::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER rate_limit_rule_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rate_limit_rule
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_raise_version();
CREATE TRIGGER api_key_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_key
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_raise_version();
CREATE TRIGGER limit_override_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON limit_override
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_raise_version();
CREATE TRIGGER admin_token_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON admin_token
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_raise_version();

CREATE CONSTRAINT TRIGGER rate_limit_rule_version_announce AFTER INSERT OR UPDATE OR DELETE ON rate_limit_rule
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_announce_version();
CREATE CONSTRAINT TRIGGER api_key_version_announce AFTER INSERT OR UPDATE OR DELETE ON api_key
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_announce_version();
CREATE CONSTRAINT TRIGGER limit_override_version_announce AFTER INSERT OR UPDATE OR DELETE ON limit_override
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_announce_version();
CREATE CONSTRAINT TRIGGER admin_token_version_announce AFTER INSERT OR UPDATE OR DELETE ON admin_token
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_announce_version();
