// The embedded store's schema, as numbered migrations tracked in SQLite's
// `user_version`, so a data dir made by an older Sluice is brought up to date
// on start. It mirrors migrations/001 to 010 column for column and CHECK for CHECK
// (test/rules/schema-parity.int.test.ts feeds the same rows to both); SQLite has no
// regex, so the id and policy patterns are written as GLOBs of the forbidden characters.
// Like 010, it checks a policy's form and never lists the policies: the application
// checks every rule against the policy registry where it is written and again on
// every read (a row that fails is logged and skipped), so a new policy needs no
// schema change (issue #39).
import type Database from 'better-sqlite3';
import type { RulesLogger } from '../logger.js';

/** The first schema (no id or policy CHECKs): what data dirs made before migrations hold. */
const V1_TABLES = `
CREATE TABLE IF NOT EXISTS rate_limit_rule (
  tenant_id TEXT NOT NULL CHECK (length(tenant_id) BETWEEN 1 AND 64),
  route_id TEXT NOT NULL CHECK (length(route_id) BETWEEN 1 AND 64),
  policy TEXT NOT NULL,
  capacity INTEGER NULL CHECK (capacity > 0),
  refill_per_second REAL NULL CHECK (refill_per_second > 0),
  params TEXT NOT NULL DEFAULT '{}',
  shadow INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, route_id)
);
CREATE TABLE IF NOT EXISTS api_key (
  id TEXT PRIMARY KEY,
  key_hash BLOB NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  tenant_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT NULL
);
CREATE INDEX IF NOT EXISTS api_key_tenant_idx ON api_key (tenant_id);
CREATE TABLE IF NOT EXISTS sluice_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

const ID_CHARS = "NOT GLOB '*[^A-Za-z0-9._~@+-]*'";
const NOW = "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))";

/** migrations/010's `^[a-z][a-z0-9_]{0,63}$`: a well-formed policy name, whichever policies there are. */
const POLICY_FORM = "length(policy) BETWEEN 1 AND 64 AND policy GLOB '[a-z]*' AND policy NOT GLOB '*[^a-z0-9_]*'";

/**
 * A rule's columns and their CHECKs: rate_limit_rule's, and limit_override's
 * (migrations/001 and 004 as 010 left them). Files made before version 9 had
 * 001's list of policy names here; version 9 rebuilds their two tables.
 */
const RULE_COLUMNS_CHECKED = `  policy TEXT NOT NULL CHECK (${POLICY_FORM}),
  capacity INTEGER NULL CHECK (capacity IS NULL OR (typeof(capacity) = 'integer' AND capacity BETWEEN 1 AND 2147483647)),
  refill_per_second REAL NULL CHECK (refill_per_second IS NULL OR (typeof(refill_per_second) = 'real' AND refill_per_second > 0)),
  params TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params) AND json_type(params) = 'object'),
  shadow INTEGER NOT NULL DEFAULT 0 CHECK (shadow IN (0, 1)),
  updated_at TEXT NOT NULL DEFAULT ${NOW},`;
const RULE_TABLE_CHECKS = 'CHECK ((capacity IS NULL) = (refill_per_second IS NULL))';

/** rate_limit_rule (migrations/001 as 010 left it), created as `name`. */
const ruleTable = (name: string): string => `
CREATE TABLE ${name} (
  id INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL CHECK (tenant_id = '*' OR (length(tenant_id) BETWEEN 1 AND 64 AND tenant_id ${ID_CHARS})),
  route_id TEXT NOT NULL CHECK (route_id = '*' OR (length(route_id) BETWEEN 1 AND 64 AND route_id ${ID_CHARS})),
${RULE_COLUMNS_CHECKED}
  UNIQUE (tenant_id, route_id),
  ${RULE_TABLE_CHECKS}
);`;

/** migrations/001's CHECKs: ids, the policy's form, column types, and capacity with refill or neither. */
const V2_TABLES = `${ruleTable('rate_limit_rule_v2')}
CREATE TABLE api_key_v2 (
  id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64 AND id NOT GLOB '*[^A-Za-z0-9_-]*'),
  key_hash BLOB NOT NULL UNIQUE CHECK (typeof(key_hash) = 'blob' AND length(key_hash) = 32),
  tenant_id TEXT NOT NULL CHECK (length(tenant_id) BETWEEN 1 AND 64 AND tenant_id ${ID_CHARS}),
  created_at TEXT NOT NULL DEFAULT ${NOW},
  revoked_at TEXT NULL
);
`;

const RULE_COPY = 'tenant_id, route_id, policy, capacity, refill_per_second, params, shadow, updated_at';
const KEY_COPY = 'id, key_hash, tenant_id, created_at, revoked_at';
const OVERRIDE_COPY = 'limit_id, selector, policy, capacity, refill_per_second, params, shadow, updated_at';

/** `name`, or `name_2`, `name_3`...: the first no table has (an earlier rebuild may have kept rows aside under `name`). */
function freeTableName(db: Database.Database, name: string): string {
  const taken = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name));
  let free = name;
  for (let n = 2; taken.has(free); n++) free = `${name}_${n}`;
  return free;
}

/**
 * Moves `table`'s rows into `<table>_v2`, already created with the new CHECKs
 * (SQLite cannot add or change one in a table), and puts the new table in the
 * old one's place. A row that fails them, which only a hand edit can have
 * made, is kept aside in `<table>_rejected` rather than lost, and logged.
 * The old table's triggers and indexes go with it: the caller makes them again.
 */
function rebuildChecked(db: Database.Database, logger: RulesLogger, table: string, columns: string, match: string): void {
  db.exec(`INSERT OR IGNORE INTO ${table}_v2 (${columns}) SELECT ${columns} FROM ${table}`);
  const aside = freeTableName(db, `${table}_rejected`);
  db.exec(`CREATE TABLE ${aside} AS SELECT * FROM ${table} o WHERE NOT EXISTS (SELECT 1 FROM ${table}_v2 n WHERE ${match})`);
  const rejected = (db.prepare(`SELECT count(*) AS n FROM ${aside}`).get() as { n: number }).n;
  if (rejected === 0) db.exec(`DROP TABLE ${aside}`);
  else logger.warn({ rows: rejected, table: aside }, `rows of ${table} that break the schema's checks were moved aside`);
  db.exec(`DROP TABLE ${table}; ALTER TABLE ${table}_v2 RENAME TO ${table}`);
}

/** Rebuilds the first schema's two tables with the CHECKs. */
function addChecks(db: Database.Database, logger: RulesLogger): void {
  db.exec(V2_TABLES);
  rebuildChecked(db, logger, 'rate_limit_rule', RULE_COPY, 'n.tenant_id = o.tenant_id AND n.route_id = o.route_id');
  rebuildChecked(db, logger, 'api_key', KEY_COPY, 'n.id = o.id');
  db.exec('CREATE INDEX api_key_tenant_idx ON api_key (tenant_id)');
}

/** A space or an ASCII control character (PostgreSQL's [:space:][:cntrl:]; no text holds a NUL). */
const SPACE_OR_CONTROL = ` ${String.fromCharCode(...Array.from({ length: 31 }, (_, i) => i + 1), 127)}`;

/** migrations/004 (as 010 left it): per-key overrides, the rule in rate_limit_rule's columns and CHECKs, created as `name`. */
const overrideTable = (name: string): string => `
CREATE TABLE ${name} (
  id INTEGER PRIMARY KEY,
  limit_id TEXT NOT NULL CHECK (length(limit_id) BETWEEN 1 AND 64 AND limit_id ${ID_CHARS}),
  selector TEXT NOT NULL CHECK (length(selector) <= 128 AND (selector GLOB 'tenant:?*' OR selector GLOB 'ip:?*' OR selector GLOB 'header:?*')
                                AND selector NOT GLOB '*[${SPACE_OR_CONTROL}]*'),
${RULE_COLUMNS_CHECKED}
  UNIQUE (limit_id, selector),
  ${RULE_TABLE_CHECKS}
);`;

/** migrations/005: named admin tokens and the audit log. */
const V4_TEAM = `
CREATE TABLE admin_token (
  name TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64 AND name NOT GLOB '*[^A-Za-z0-9._-]*' AND name <> 'bootstrap'),
  role TEXT NOT NULL CHECK (role IN ('read', 'write', 'admin')),
  token_hash BLOB NOT NULL UNIQUE CHECK (typeof(token_hash) = 'blob' AND length(token_hash) = 32),
  created_at TEXT NOT NULL DEFAULT ${NOW}
);
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL DEFAULT ${NOW},
  actor TEXT NOT NULL CHECK (length(actor) BETWEEN 1 AND 64),
  address TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('rule', 'override', 'key', 'token', 'bucket', 'reload')),
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  before TEXT NULL CHECK (before IS NULL OR json_valid(before)),
  after TEXT NULL CHECK (after IS NULL OR json_valid(after)),
  outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'failed')),
  error TEXT NULL
);
CREATE INDEX audit_log_at_idx ON audit_log (at);
`;

/** The triggers that raise the rule-set version on every change to `tables` (SQLite triggers run per row). */
const versionTriggers = (tables: readonly string[]): string =>
  tables.flatMap((table) => ['INSERT', 'UPDATE', 'DELETE'].map((event) => `CREATE TRIGGER ${table}_version_${event.toLowerCase()} AFTER ${event} ON ${table} BEGIN UPDATE rule_set_version SET version = version + 1; END;`)).join('\n');

/** migrations/006: the rule-set version, raised in the writing transaction by every change. */
const VERSIONED_TABLES = ['rate_limit_rule', 'api_key', 'limit_override', 'admin_token'];
const V5_VERSION = `
CREATE TABLE rule_set_version (only_row INTEGER PRIMARY KEY CHECK (only_row = 1), version INTEGER NOT NULL CHECK (version >= 0),
  store_id TEXT NOT NULL DEFAULT (lower(hex(randomblob(16)))));
INSERT INTO rule_set_version (only_row, version) VALUES (1, 0);
${versionTriggers(VERSIONED_TABLES)}
`;

/** migrations/007: each outcome of the audit log numbered apart, so failed attempts are capped apart from changes. */
const V6_AUDIT_SEQ = `
ALTER TABLE audit_log ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE audit_log SET seq = numbered.n FROM (SELECT id, row_number() OVER (PARTITION BY outcome ORDER BY id) AS n FROM audit_log) AS numbered WHERE numbered.id = audit_log.id;
CREATE INDEX audit_log_outcome_seq_idx ON audit_log (outcome, seq);
`;

/** The audit log with the kinds `kinds` allows (SQLite rebuilds a table to change a CHECK). */
const auditLogWithKinds = (kinds: string): string => `
CREATE TABLE audit_log_v2 (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL DEFAULT ${NOW},
  actor TEXT NOT NULL CHECK (length(actor) BETWEEN 1 AND 64),
  address TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN (${kinds})),
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  before TEXT NULL CHECK (before IS NULL OR json_valid(before)),
  after TEXT NULL CHECK (after IS NULL OR json_valid(after)),
  outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'failed')),
  error TEXT NULL,
  seq INTEGER NOT NULL DEFAULT 0
);
INSERT INTO audit_log_v2 SELECT id, at, actor, address, kind, action, target, before, after, outcome, error, seq FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_v2 RENAME TO audit_log;
CREATE INDEX audit_log_at_idx ON audit_log (at);
CREATE INDEX audit_log_outcome_seq_idx ON audit_log (outcome, seq);
`;

/** migrations/008: plans, their limits and who is on which (the rule as JSON text); the audit log takes kind `plan` (SQLite rebuilds a table to change a CHECK). */
const PLAN_TABLES = ['plan', 'plan_limit', 'plan_assignment'];
const V7_PLANS = `
CREATE TABLE plan (
  name TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64 AND name ${ID_CHARS}),
  created_at TEXT NOT NULL DEFAULT ${NOW}
);
CREATE TABLE plan_limit (
  plan_name TEXT NOT NULL REFERENCES plan (name) ON DELETE CASCADE,
  scope TEXT NOT NULL CHECK (scope IN ('route', 'limit', 'global')),
  target TEXT NOT NULL CHECK (target = '*' OR (length(target) BETWEEN 1 AND 64 AND target ${ID_CHARS})),
  rule TEXT NOT NULL CHECK (json_valid(rule) AND json_type(rule) = 'object'),
  updated_at TEXT NOT NULL DEFAULT ${NOW},
  PRIMARY KEY (plan_name, scope, target),
  CHECK ((scope = 'global') = (target = '*'))
);
CREATE TABLE plan_assignment (
  subject TEXT NOT NULL CHECK (subject IN ('tenant', 'key')),
  subject_id TEXT NOT NULL CHECK (length(subject_id) BETWEEN 1 AND 64 AND subject_id ${ID_CHARS}),
  plan_name TEXT NOT NULL REFERENCES plan (name) ON DELETE RESTRICT,
  updated_at TEXT NOT NULL DEFAULT ${NOW},
  PRIMARY KEY (subject, subject_id)
);
CREATE INDEX plan_assignment_plan_idx ON plan_assignment (plan_name);
${versionTriggers(PLAN_TABLES)}
${auditLogWithKinds("'rule', 'override', 'key', 'token', 'bucket', 'reload', 'plan'")}`;

/** migrations/009: allow and deny list entries (routes as a JSON array); the audit log takes kind `list`. */
const V8_LISTS = `
CREATE TABLE list_entry (
  id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64 AND id NOT GLOB '*[^A-Za-z0-9_-]*'),
  action TEXT NOT NULL CHECK (action IN ('allow', 'deny')),
  match_kind TEXT NOT NULL CHECK (match_kind IN ('cidr', 'tenant', 'header', 'claim')),
  match_name TEXT NULL CHECK (match_name IS NULL OR length(match_name) BETWEEN 1 AND 256),
  match_value TEXT NOT NULL CHECK (length(match_value) BETWEEN 1 AND 128),
  routes TEXT NULL CHECK (routes IS NULL OR (json_valid(routes) AND json_type(routes) = 'array' AND json_array_length(routes) >= 1)),
  limit_id TEXT NULL CHECK (limit_id IS NULL OR (length(limit_id) BETWEEN 1 AND 64 AND limit_id ${ID_CHARS})),
  expires_at TEXT NULL,
  note TEXT NULL CHECK (note IS NULL OR length(note) <= 500),
  created_at TEXT NOT NULL DEFAULT ${NOW},
  CHECK ((match_kind IN ('header', 'claim')) = (match_name IS NOT NULL)),
  CHECK (match_kind <> 'tenant' OR (length(match_value) <= 64 AND match_value ${ID_CHARS})),
  CHECK (limit_id IS NULL OR action = 'allow')
);
${versionTriggers(['list_entry'])}
${auditLogWithKinds("'rule', 'override', 'key', 'token', 'bucket', 'reload', 'plan', 'list'")}`;

/**
 * migrations/010: both rule tables rebuilt with the policy's form checked in
 * place of the list of names that files made before this version hold. A
 * file made new already has the new layout (addChecks and version 3 make it),
 * and the rebuild of its empty tables changes nothing. Their version triggers
 * are dropped with the old tables and made again.
 */
function checkPolicyForm(db: Database.Database, logger: RulesLogger): void {
  db.exec(ruleTable('rate_limit_rule_v2') + overrideTable('limit_override_v2'));
  rebuildChecked(db, logger, 'rate_limit_rule', `id, ${RULE_COPY}`, 'n.id = o.id');
  rebuildChecked(db, logger, 'limit_override', `id, ${OVERRIDE_COPY}`, 'n.id = o.id');
  db.exec(versionTriggers(['rate_limit_rule', 'limit_override']));
}

const MIGRATIONS: readonly ((db: Database.Database, logger: RulesLogger) => void)[] = [
  (db) => db.exec(V1_TABLES),
  addChecks,
  (db) => db.exec(overrideTable('limit_override')),
  (db) => db.exec(V4_TEAM),
  (db) => db.exec(V5_VERSION),
  (db) => db.exec(V6_AUDIT_SEQ),
  (db) => db.exec(V7_PLANS),
  (db) => db.exec(V8_LISTS),
  checkPolicyForm,
];

/** Applies the migrations the file has not had yet, each in its own transaction; returns how many ran. */
export function migrateEmbedded(db: Database.Database, logger: RulesLogger): number {
  const from = db.pragma('user_version', { simple: true }) as number;
  for (let version = from; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      MIGRATIONS[version]!(db, logger);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
  return Math.max(0, MIGRATIONS.length - from);
}
