-- Allow and deny lists (docs/lists.md): one row per entry. An entry matches by
-- one thing (match_kind): a client address or network (match_value is the CIDR
-- text), an API key's tenant, or a header's or a verified JWT claim's value
-- (match_name is the header or claim, match_value the value's SHA-256 in
-- base64url: the clear value is never stored). routes is a JSON array of route
-- ids (NULL: every route); limit_id names the one rate limit an allow entry
-- lifts. Changes are announced like rules' (002), raise the rule-set version
-- (006) and carry the write deadline (003); the audit log takes kind `list`.

CREATE TABLE list_entry (
    id          VARCHAR(64)  PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]+$'),
    action      TEXT         NOT NULL CHECK (action IN ('allow', 'deny')),
    match_kind  TEXT         NOT NULL CHECK (match_kind IN ('cidr', 'tenant', 'header', 'claim')),
    match_name  VARCHAR(256) NULL CHECK (match_name IS NULL OR length(match_name) >= 1),
    match_value VARCHAR(128) NOT NULL CHECK (length(match_value) >= 1),
    routes      JSONB        NULL CHECK (routes IS NULL OR (jsonb_typeof(routes) = 'array' AND jsonb_array_length(routes) >= 1)),
    limit_id    VARCHAR(64)  NULL CHECK (limit_id IS NULL OR limit_id ~ '^[A-Za-z0-9._~@+-]+$'),
    expires_at  TIMESTAMPTZ  NULL,
    note        VARCHAR(500) NULL,
    created_at  TIMESTAMPTZ  NOT NULL DEFAULT now(),
    CHECK ((match_kind IN ('header', 'claim')) = (match_name IS NOT NULL)),
    CHECK (match_kind <> 'tenant' OR (length(match_value) <= 64 AND match_value ~ '^[A-Za-z0-9._~@+-]+$')),
    CHECK (limit_id IS NULL OR action = 'allow')
);

ALTER TABLE audit_log DROP CONSTRAINT audit_log_kind_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_kind_check
    CHECK (kind IN ('rule', 'override', 'key', 'token', 'bucket', 'reload', 'plan', 'list'));

CREATE FUNCTION sluice_notify_list() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('sluice_changes', json_build_object('kind', 'list', 'id', COALESCE(NEW.id, OLD.id))::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER list_entry_notify AFTER INSERT OR UPDATE OR DELETE ON list_entry
    FOR EACH ROW EXECUTE FUNCTION sluice_notify_list();
CREATE TRIGGER list_entry_truncate AFTER TRUNCATE ON list_entry
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_notify_truncate();
CREATE TRIGGER list_entry_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON list_entry
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_raise_version();
CREATE CONSTRAINT TRIGGER list_entry_version_announce AFTER INSERT OR UPDATE OR DELETE ON list_entry
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_announce_version();
CREATE CONSTRAINT TRIGGER list_entry_write_deadline AFTER INSERT OR UPDATE OR DELETE ON list_entry
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_check_write_deadline();
