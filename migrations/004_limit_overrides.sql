-- Per-key overrides of a limit's rule (docs/limits.md#overrides): the limit id
-- from a route's `limits:`, a selector naming the keys it applies to
-- (`tenant:ID`, `ip:ADDRESS[/LEN]`, `header:~h.<hash>`, kept in the canonical
-- form the application writes) and a rule in the same columns, with the same
-- CHECKs, as rate_limit_rule. The application re-validates every row on load.
-- Changes are announced like rules' (002) and carry the write deadline (003).
-- 010 replaced the CHECKs below that list the policies by checks of form only.

CREATE TABLE limit_override (
    id                 BIGSERIAL        PRIMARY KEY,
    limit_id           VARCHAR(64)      NOT NULL CHECK (limit_id ~ '^[A-Za-z0-9._~@+-]+$'),
    selector           VARCHAR(128)     NOT NULL CHECK (selector ~ '^(tenant|ip|header):[^[:space:][:cntrl:]]+$'),
    policy             TEXT             NOT NULL CHECK (policy IN ('token_bucket', 'gcra', 'fixed_window',
                                            'sliding_window_log', 'sliding_window_counter', 'leaky_bucket')),
    capacity           INT              NULL CHECK (capacity > 0),
    refill_per_second  DOUBLE PRECISION NULL CHECK (refill_per_second > 0),
    params             JSONB            NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(params) = 'object'),
    shadow             BOOLEAN          NOT NULL DEFAULT false,
    updated_at         TIMESTAMPTZ      NOT NULL DEFAULT now(),
    UNIQUE (limit_id, selector),
    CHECK ((policy IN ('token_bucket', 'gcra')) = (capacity IS NOT NULL AND refill_per_second IS NOT NULL)),
    CHECK (policy IN ('token_bucket', 'gcra') OR (capacity IS NULL AND refill_per_second IS NULL))
);

CREATE FUNCTION sluice_notify_override() RETURNS trigger AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('sluice_changes',
            json_build_object('kind', 'override', 'limit', OLD.limit_id, 'selector', OLD.selector)::text);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('sluice_changes',
            json_build_object('kind', 'override', 'limit', NEW.limit_id, 'selector', NEW.selector)::text);
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER limit_override_notify
    AFTER INSERT OR UPDATE OR DELETE ON limit_override
    FOR EACH ROW EXECUTE FUNCTION sluice_notify_override();

CREATE TRIGGER limit_override_truncate AFTER TRUNCATE ON limit_override
    FOR EACH STATEMENT EXECUTE FUNCTION sluice_notify_truncate();

CREATE CONSTRAINT TRIGGER limit_override_write_deadline
    AFTER INSERT OR UPDATE OR DELETE ON limit_override
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION sluice_check_write_deadline();
