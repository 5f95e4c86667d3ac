-- Rules and API keys: the design's rate_limit_rule table (section 4.1), grown to
-- every policy, plus the api_key table that maps a key's SHA-256 to its tenant.
--
-- Layout: `policy` names the algorithm. Token bucket and GCRA keep the design's
-- `capacity` / `refill_per_second` columns (so a DBA reading the table sees the
-- familiar limit, and the CHECKs guard them); every other parameter and option
-- (limit, windowMs, burst, lease, shards, ...) lives in `params` JSONB. Nothing
-- is stored twice, and the application re-validates every row with parseRule
-- on load, so a hand-edited row can never reach the hot path unchecked.
-- refill_per_second is DOUBLE PRECISION, not INT: a rule may refill 0.5 tokens/s.
-- 010 replaced the CHECKs below that list the policies by checks of form only.

CREATE TABLE rate_limit_rule (
    id                 BIGSERIAL        PRIMARY KEY,
    tenant_id          VARCHAR(64)      NOT NULL CHECK (tenant_id ~ '^([A-Za-z0-9._~@+-]+|\*)$'),
    route_id           VARCHAR(64)      NOT NULL CHECK (route_id ~ '^([A-Za-z0-9._~@+-]+|\*)$'),
    policy             TEXT             NOT NULL CHECK (policy IN ('token_bucket', 'gcra', 'fixed_window',
                                            'sliding_window_log', 'sliding_window_counter', 'leaky_bucket')),
    capacity           INT              NULL CHECK (capacity > 0),
    refill_per_second  DOUBLE PRECISION NULL CHECK (refill_per_second > 0),
    params             JSONB            NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(params) = 'object'),
    shadow             BOOLEAN          NOT NULL DEFAULT false,
    updated_at         TIMESTAMPTZ      NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, route_id),
    -- capacity/refill are set exactly for the policies that have them.
    CHECK ((policy IN ('token_bucket', 'gcra')) = (capacity IS NOT NULL AND refill_per_second IS NOT NULL)),
    CHECK (policy IN ('token_bucket', 'gcra') OR (capacity IS NULL AND refill_per_second IS NULL))
);

CREATE TABLE api_key (
    id          TEXT        PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
    -- SHA-256 of the key: the clear key is shown once at creation and never stored.
    key_hash    BYTEA       NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
    tenant_id   VARCHAR(64) NOT NULL CHECK (tenant_id ~ '^[A-Za-z0-9._~@+-]+$'),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at  TIMESTAMPTZ NULL
);

CREATE INDEX api_key_tenant_idx ON api_key (tenant_id);

-- Small facts about the store itself, e.g. whether the config's rules were seeded.
CREATE TABLE sluice_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
