-- Named admin tokens with a role (read, write, admin), kept as the SHA-256 of
-- the clear token, and the audit log of every change made through the admin
-- API (docs/admin-api.md#tokens-and-roles, #audit-log). A token is checked on
-- each admin request (cached for at most 500 ms), so a revoked one is refused
-- by every instance sharing this database within a second: no NOTIFY needed.

CREATE TABLE admin_token (
    name        VARCHAR(64)  PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._-]+$' AND name <> 'bootstrap'),
    role        TEXT         NOT NULL CHECK (role IN ('read', 'write', 'admin')),
    token_hash  BYTEA        NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at  TIMESTAMPTZ  NOT NULL DEFAULT now()
);

-- Bounded by the application: each append prunes entries past the retention
-- (SLUICE_AUDIT_KEEP_DAYS, default 90; SLUICE_AUDIT_KEEP_ENTRIES, default 100,000).
CREATE TABLE audit_log (
    id       BIGSERIAL    PRIMARY KEY,
    at       TIMESTAMPTZ  NOT NULL DEFAULT now(),
    actor    VARCHAR(64)  NOT NULL,
    address  TEXT         NOT NULL,
    kind     TEXT         NOT NULL CHECK (kind IN ('rule', 'override', 'key', 'token', 'bucket', 'reload')),
    action   TEXT         NOT NULL,
    target   TEXT         NOT NULL,
    before   JSONB        NULL,
    after    JSONB        NULL,
    outcome  TEXT         NOT NULL CHECK (outcome IN ('ok', 'failed')),
    error    TEXT         NULL
);
CREATE INDEX audit_log_at_idx ON audit_log (at);
