-- Plans (docs/plans.md): a named set of limits, and which plan each tenant or
-- API key is on. A plan's limit is one row of plan_limit (scope `route`, `limit`
-- or `global`), so changing it writes one row however many tenants are on the
-- plan; moving a tenant writes its one plan_assignment row. The rule is kept
-- as one JSON object (the application parses every row it reads, as it does
-- rules'). Changes are announced like rules' (002), raise the rule-set version
-- (006) and carry the write deadline (003). Deleting a plan that a tenant or a
-- key is still on is refused (RESTRICT): the admin API says so with a 409.

CREATE TABLE plan (
    name        VARCHAR(64)  PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._~@+-]+$'),
    created_at  TIMESTAMPTZ  NOT NULL DEFAULT now()
);

CREATE TABLE plan_limit (
    plan_name   VARCHAR(64)  NOT NULL REFERENCES plan (name) ON DELETE CASCADE,
    scope       TEXT         NOT NULL CHECK (scope IN ('route', 'limit', 'global')),
    target      VARCHAR(64)  NOT NULL CHECK (target = '*' OR target ~ '^[A-Za-z0-9._~@+-]+$'),
    rule        JSONB        NOT NULL CHECK (jsonb_typeof(rule) = 'object'),
    updated_at  TIMESTAMPTZ  NOT NULL DEFAULT now(),
    PRIMARY KEY (plan_name, scope, target),
    CHECK ((scope = 'global') = (target = '*'))
);

CREATE TABLE plan_assignment (
    subject     TEXT         NOT NULL CHECK (subject IN ('tenant', 'key')),
    subject_id  VARCHAR(64)  NOT NULL CHECK (subject_id ~ '^[A-Za-z0-9._~@+-]+$'),
    plan_name   VARCHAR(64)  NOT NULL REFERENCES plan (name) ON DELETE RESTRICT,
    updated_at  TIMESTAMPTZ  NOT NULL DEFAULT now(),
    PRIMARY KEY (subject, subject_id)
);
CREATE INDEX plan_assignment_plan_idx ON plan_assignment (plan_name);

ALTER TABLE audit_log DROP CONSTRAINT audit_log_kind_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_kind_check
    CHECK (kind IN ('rule', 'override', 'key', 'token', 'bucket', 'reload', 'plan'));

CREATE FUNCTION sluice_notify_plan() RETURNS trigger AS $$
BEGIN
    IF TG_TABLE_NAME = 'plan' THEN
        PERFORM pg_notify('sluice_changes', json_build_object('kind', 'plan', 'plan', COALESCE(NEW.name, OLD.name))::text);
    ELSIF TG_TABLE_NAME = 'plan_limit' THEN
        PERFORM pg_notify('sluice_changes', json_build_object('kind', 'plan', 'plan', COALESCE(NEW.plan_name, OLD.plan_name))::text);
    ELSE
        PERFORM pg_notify('sluice_changes',
            json_build_object('kind', 'assignment', 'subject', COALESCE(NEW.subject, OLD.subject), 'id', COALESCE(NEW.subject_id, OLD.subject_id))::text);
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER plan_notify AFTER INSERT OR UPDATE OR DELETE ON plan
    FOR EACH ROW EXECUTE FUNCTION sluice_notify_plan();
CREATE TRIGGER plan_limit_notify AFTER INSERT OR UPDATE OR DELETE ON plan_limit
    FOR EACH ROW EXECUTE FUNCTION sluice_notify_plan();
CREATE TRIGGER plan_assignment_notify AFTER INSERT OR UPDATE OR DELETE ON plan_assignment
    FOR EACH ROW EXECUTE FUNCTION sluice_notify_plan();

CREATE TRIGGER plan_truncate AFTER TRUNCATE ON plan
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_notify_truncate();
CREATE TRIGGER plan_limit_truncate AFTER TRUNCATE ON plan_limit
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_notify_truncate();
CREATE TRIGGER plan_assignment_truncate AFTER TRUNCATE ON plan_assignment
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_notify_truncate();

CREATE TRIGGER plan_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON plan
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_raise_version();
CREATE TRIGGER plan_limit_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON plan_limit
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_raise_version();
CREATE TRIGGER plan_assignment_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON plan_assignment
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_raise_version();

CREATE CONSTRAINT TRIGGER plan_version_announce AFTER INSERT OR UPDATE OR DELETE ON plan
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_announce_version();
CREATE CONSTRAINT TRIGGER plan_limit_version_announce AFTER INSERT OR UPDATE OR DELETE ON plan_limit
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_announce_version();
CREATE CONSTRAINT TRIGGER plan_assignment_version_announce AFTER INSERT OR UPDATE OR DELETE ON plan_assignment
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_announce_version();

CREATE CONSTRAINT TRIGGER plan_write_deadline AFTER INSERT OR UPDATE OR DELETE ON plan
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_check_write_deadline();
CREATE CONSTRAINT TRIGGER plan_limit_write_deadline AFTER INSERT OR UPDATE OR DELETE ON plan_limit
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_check_write_deadline();
CREATE CONSTRAINT TRIGGER plan_assignment_write_deadline AFTER INSERT OR UPDATE OR DELETE ON plan_assignment
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sluice_check_write_deadline();
