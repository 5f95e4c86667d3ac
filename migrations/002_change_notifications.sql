-- Every change to a rule or a key is announced on the `sluice_changes` channel,
-- after commit, to every gateway instance LISTENing. Triggers (rather than the
-- writing code) also catch edits made with psql. Payloads carry only ids: the
-- instance re-reads the row, so a notification can never carry a stale rule.

CREATE FUNCTION sluice_notify_rule() RETURNS trigger AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('sluice_changes',
            json_build_object('kind', 'rule', 'tenant', OLD.tenant_id, 'route', OLD.route_id)::text);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('sluice_changes',
            json_build_object('kind', 'rule', 'tenant', NEW.tenant_id, 'route', NEW.route_id)::text);
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER rate_limit_rule_notify
    AFTER INSERT OR UPDATE OR DELETE ON rate_limit_rule
    FOR EACH ROW EXECUTE FUNCTION sluice_notify_rule();

CREATE FUNCTION sluice_notify_key() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('sluice_changes',
        json_build_object('kind', 'key', 'id', COALESCE(NEW.id, OLD.id))::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER api_key_notify
    AFTER INSERT OR UPDATE OR DELETE ON api_key
    FOR EACH ROW EXECUTE FUNCTION sluice_notify_key();

-- A bulk TRUNCATE fires no row triggers: tell listeners to reload everything.
CREATE FUNCTION sluice_notify_truncate() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('sluice_changes', json_build_object('kind', 'reload')::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER rate_limit_rule_truncate AFTER TRUNCATE ON rate_limit_rule
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_notify_truncate();
CREATE TRIGGER api_key_truncate AFTER TRUNCATE ON api_key
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_notify_truncate();
