// A data dir made by an older Sluice is brought up to date when a store opens it:
// one made before the embedded store had migrations (the first schema, without
// the id and policy CHECKs), and one at version 8, whose rule tables listed the
// policies in CHECKs that version 9 replaces by checks of form (migrations/010).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { POLICY_REGISTRY } from '../../../src/policies/index.js';
import { migrateEmbedded } from '../../../src/rules/embedded/schema.js';
import { EmbeddedRuleStore } from '../../../src/rules/embedded/store.js';
import { silentLogger } from '../../../src/rules/logger.js';
import { toColumns } from '../../../src/rules/rule-columns.js';
import { EVERY_POLICY, type StoredRuleInput } from '../every-policy.js';
import { recordingLogger } from '../store-contract.js';


/** The schema an older Sluice created, verbatim. */
const OLD_SCHEMA = `
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

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A data dir as an older Sluice left it: two good rules, one hand-edited bad one, a key. */
function oldDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-old-'));
  dirs.push(dir);
  const db = new Database(join(dir, 'rules.sqlite'));
  db.exec(OLD_SCHEMA);
  const insert = db.prepare('INSERT INTO rate_limit_rule VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  insert.run('shop-a', 'orders', 'token_bucket', 5, 1, '{}', 0, '2026-01-01T00:00:00.000Z');
  insert.run('*', 'search', 'fixed_window', null, null, '{"limit":9,"windowMs":1000}', 1, '2026-01-02T00:00:00.000Z');
  insert.run('shop a', 'orders', 'token_bucket', 5, 1, '{}', 0, '2026-01-03T00:00:00.000Z');
  db.prepare('INSERT INTO api_key VALUES (?, ?, ?, ?, ?)').run('key_1', Buffer.alloc(32, 1), 'shop-a', '2026-01-01T00:00:00.000Z', null);
  db.prepare("INSERT INTO sluice_meta VALUES ('seeded', 'yes')").run();
  db.close();
  return dir;
}

describe('embedded schema migrations', () => {
  it('bring an old data dir up to date on start, keeping its rules and keys', async () => {
    const dir = oldDataDir();
    const store = new EmbeddedRuleStore({ dataDir: dir });
    assert.deepEqual(
      (await store.listRules()).map((r) => [r.tenant, r.route, r.rule, r.updatedAt]),
      [
        ['*', 'search', { policy: 'fixed_window', limit: 9, windowMs: 1000, shadow: true }, '2026-01-02T00:00:00.000Z'],
        ['shop-a', 'orders', { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 }, '2026-01-01T00:00:00.000Z'],
      ],
    );
    assert.deepEqual((await store.listActiveKeyHashes()).map((k) => k.id), ['key_1']);
    await store.putRule('shop-a', 'orders', { policy: 'gcra', capacity: 2, refillPerSecond: 1 });
    await store.close();

    const db = new Database(join(dir, 'rules.sqlite'));
    try {
      // The CHECKs now hold: a hand edit with an invalid id is refused, as PostgreSQL refuses it.
      assert.throws(() => db.prepare("INSERT INTO rate_limit_rule (tenant_id, route_id, policy) VALUES ('shop:a', 'r', 'fixed_window')").run(), /CHECK/);
      // ...and a policy that is no well-formed name (which policies exist is parseRule's to say, on every read).
      assert.throws(() => db.prepare("INSERT INTO rate_limit_rule (tenant_id, route_id, policy) VALUES ('shop-a', 'r', 'No pe')").run(), /CHECK/);
      // The row that breaks them was moved aside, not lost.
      assert.deepEqual(db.prepare('SELECT tenant_id, route_id FROM rate_limit_rule_rejected').all(), [{ tenant_id: 'shop a', route_id: 'orders' }]);
      // ...and the overrides table (migration 3) is there, empty.
      assert.deepEqual(db.prepare('SELECT count(*) AS n FROM limit_override').get(), { n: 0 });
      // ...and the tokens and audit log (migration 4), empty.
      assert.deepEqual(db.prepare('SELECT (SELECT count(*) FROM admin_token) + (SELECT count(*) FROM audit_log) AS n').get(), { n: 0 });
      // ...and the rule-set version (migration 5), raised by the rows the migrations kept.
      assert.deepEqual(db.prepare('SELECT count(*) AS n FROM rule_set_version').get(), { n: 1 });
      // ...and the audit log's per-outcome numbering (migration 6).
      assert.ok((db.prepare('PRAGMA table_info(audit_log)').all() as { name: string }[]).some((column) => column.name === 'seq'));
      // ...and the plans (migration 7), empty, with an audit log that takes kind `plan`.
      assert.deepEqual(db.prepare('SELECT (SELECT count(*) FROM plan) + (SELECT count(*) FROM plan_limit) + (SELECT count(*) FROM plan_assignment) AS n').get(), { n: 0 });
      assert.match((db.prepare("SELECT sql FROM sqlite_master WHERE name = 'audit_log'").get() as { sql: string }).sql, /'plan'/);
      // ...and the list entries (migration 8), empty, with an audit log that takes kind `list`.
      assert.deepEqual(db.prepare('SELECT count(*) AS n FROM list_entry').get(), { n: 0 });
      assert.match((db.prepare("SELECT sql FROM sqlite_master WHERE name = 'audit_log'").get() as { sql: string }).sql, /'list'/);
      assert.equal(db.pragma('user_version', { simple: true }), 9);
    } finally {
      db.close();
    }
  });

  it('run once: reopening changes nothing', async () => {
    const dir = oldDataDir();
    await new EmbeddedRuleStore({ dataDir: dir }).close();
    const store = new EmbeddedRuleStore({ dataDir: dir, seedRules: [{ tenant: 'shop-z', route: 'r', rule: { policy: 'fixed_window', limit: 1, windowMs: 1000 } }] });
    assert.deepEqual((await store.listRules()).map((r) => r.route), ['search', 'orders'], 'already seeded: the config rules are not written again');
    await store.close();
  });
});

/** Version 8's rule tables: the CHECKs that list the policies, as version 2 and 3 wrote them. */
const V8_RULE_TABLES = `
DROP TABLE rate_limit_rule;
DROP TABLE limit_override;
CREATE TABLE rate_limit_rule (
  id INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL CHECK (tenant_id = '*' OR (length(tenant_id) BETWEEN 1 AND 64 AND tenant_id NOT GLOB '*[^A-Za-z0-9._~@+-]*')),
  route_id TEXT NOT NULL CHECK (route_id = '*' OR (length(route_id) BETWEEN 1 AND 64 AND route_id NOT GLOB '*[^A-Za-z0-9._~@+-]*')),
  policy TEXT NOT NULL CHECK (policy IN ('token_bucket', 'gcra', 'fixed_window',
                               'sliding_window_log', 'sliding_window_counter', 'leaky_bucket')),
  capacity INTEGER NULL CHECK (capacity IS NULL OR (typeof(capacity) = 'integer' AND capacity BETWEEN 1 AND 2147483647)),
  refill_per_second REAL NULL CHECK (refill_per_second IS NULL OR (typeof(refill_per_second) = 'real' AND refill_per_second > 0)),
  params TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params) AND json_type(params) = 'object'),
  shadow INTEGER NOT NULL DEFAULT 0 CHECK (shadow IN (0, 1)),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (tenant_id, route_id),
  CHECK ((policy IN ('token_bucket', 'gcra')) = (capacity IS NOT NULL AND refill_per_second IS NOT NULL)),
    CHECK (policy IN ('token_bucket', 'gcra') OR (capacity IS NULL AND refill_per_second IS NULL))
);
CREATE TABLE limit_override (
  id INTEGER PRIMARY KEY,
  limit_id TEXT NOT NULL CHECK (length(limit_id) BETWEEN 1 AND 64 AND limit_id NOT GLOB '*[^A-Za-z0-9._~@+-]*'),
  selector TEXT NOT NULL CHECK (length(selector) <= 128 AND (selector GLOB 'tenant:?*' OR selector GLOB 'ip:?*' OR selector GLOB 'header:?*')),
  policy TEXT NOT NULL CHECK (policy IN ('token_bucket', 'gcra', 'fixed_window',
                               'sliding_window_log', 'sliding_window_counter', 'leaky_bucket')),
  capacity INTEGER NULL CHECK (capacity IS NULL OR (typeof(capacity) = 'integer' AND capacity BETWEEN 1 AND 2147483647)),
  refill_per_second REAL NULL CHECK (refill_per_second IS NULL OR (typeof(refill_per_second) = 'real' AND refill_per_second > 0)),
  params TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params) AND json_type(params) = 'object'),
  shadow INTEGER NOT NULL DEFAULT 0 CHECK (shadow IN (0, 1)),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (limit_id, selector),
  CHECK ((policy IN ('token_bucket', 'gcra')) = (capacity IS NOT NULL AND refill_per_second IS NOT NULL)),
    CHECK (policy IN ('token_bucket', 'gcra') OR (capacity IS NULL AND refill_per_second IS NULL))
);
${['rate_limit_rule', 'limit_override'].flatMap((table) =>
  ['INSERT', 'UPDATE', 'DELETE'].map((event) => `CREATE TRIGGER ${table}_version_${event.toLowerCase()} AFTER ${event} ON ${table} BEGIN UPDATE rule_set_version SET version = version + 1; END;`),
).join('\n')}
PRAGMA user_version = 8;
`;

const columnValues = (rule: StoredRuleInput): unknown[] => {
  const c = toColumns(rule);
  return [c.policy, c.capacity, c.refillPerSecond, JSON.stringify(c.params), c.shadow ? 1 : 0];
};

/**
 * A data dir as version 8 left it, holding a rule and an override of every
 * policy, one rule a hand edit made past the CHECKs, and the rows an earlier
 * upgrade kept aside in rate_limit_rule_rejected.
 */
function version8DataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-v8-'));
  dirs.push(dir);
  const db = new Database(join(dir, 'rules.sqlite'));
  migrateEmbedded(db, silentLogger);
  db.exec(V8_RULE_TABLES);
  const rule = db.prepare("INSERT INTO rate_limit_rule (tenant_id, route_id, policy, capacity, refill_per_second, params, shadow, updated_at) VALUES ('shop-a', ?, ?, ?, ?, ?, ?, '2026-01-01T00:00:00.000Z')");
  const override = db.prepare("INSERT INTO limit_override (limit_id, selector, policy, capacity, refill_per_second, params, shadow, updated_at) VALUES ('per-tenant', ?, ?, ?, ?, ?, ?, '2026-01-02T00:00:00.000Z')");
  for (const [name, value] of EVERY_POLICY) {
    rule.run(name, ...columnValues(value));
    override.run(`tenant:shop-${name}`, ...columnValues(value));
  }
  db.pragma('ignore_check_constraints = ON');
  db.prepare("INSERT INTO rate_limit_rule (tenant_id, route_id, policy) VALUES ('shop-a', 'edited', 'Token Bucket')").run();
  db.pragma('ignore_check_constraints = OFF');
  db.exec("CREATE TABLE rate_limit_rule_rejected AS SELECT 'shop a' AS tenant_id, 'orders' AS route_id");
  db.close();
  return dir;
}

/** The registered policy names that `sql` spells out. */
const policyNamesIn = (sql: string): string[] => Object.keys(POLICY_REGISTRY).filter((name) => sql.includes(name));

describe('embedded schema version 9: policies checked by form, not by name', () => {
  it('brings a version 8 data dir over, keeping every row of every policy as it was', async () => {
    const dir = version8DataDir();
    const logger = recordingLogger();
    const store = new EmbeddedRuleStore({ dataDir: dir, logger });
    try {
      assert.deepEqual(
        (await store.listRules()).map((r) => [r.route, r.rule, r.updatedAt]),
        EVERY_POLICY.map(([name, rule]) => [name, rule, '2026-01-01T00:00:00.000Z']).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
      assert.deepEqual(
        (await store.overrides.list()).map((o) => [o.selector, o.rule, o.updatedAt]),
        EVERY_POLICY.map(([name, rule]) => [`tenant:shop-${name}`, rule, '2026-01-02T00:00:00.000Z']).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
      // The hand edit that breaks the new CHECKs is kept aside, beside what the earlier upgrade kept.
      assert.ok(logger.lines.some((line) => line.includes('rate_limit_rule_rejected_2')), logger.lines.join('\n'));
    } finally {
      await store.close();
    }
    const db = new Database(join(dir, 'rules.sqlite'));
    try {
      assert.equal(db.pragma('user_version', { simple: true }), 9);
      assert.deepEqual(db.prepare('SELECT tenant_id, route_id, policy FROM rate_limit_rule_rejected_2').all(), [{ tenant_id: 'shop-a', route_id: 'edited', policy: 'Token Bucket' }]);
      assert.deepEqual(db.prepare('SELECT tenant_id, route_id FROM rate_limit_rule_rejected').all(), [{ tenant_id: 'shop a', route_id: 'orders' }]);
      // The version triggers went with the old tables and were made again.
      const version = (): number => (db.prepare('SELECT version FROM rule_set_version').get() as { version: number }).version;
      const before = version();
      db.prepare("INSERT INTO limit_override (limit_id, selector, policy, params) VALUES ('l', 'tenant:x', 'fixed_window', '{}')").run();
      db.prepare("DELETE FROM rate_limit_rule WHERE route_id = 'tb'").run();
      assert.equal(version(), before + 2);
    } finally {
      db.close();
    }
  });

  const newDataDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-new-'));
    dirs.push(dir);
    return dir;
  };
  for (const [made, dataDir] of [
    ['upgraded from version 8', version8DataDir],
    ['made new', newDataDir],
  ] as const) {
    it(`checks the form of a policy and names none, in a data dir ${made}`, async () => {
      const dir = dataDir();
      await new EmbeddedRuleStore({ dataDir: dir }).close();
      const db = new Database(join(dir, 'rules.sqlite'));
      try {
        const layout = db.prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT GLOB '*_rejected*'").all() as { sql: string }[];
        assert.deepEqual(policyNamesIn(layout.map((row) => row.sql).join('\n')), []);
        let n = 0;
        for (const [table, target, second] of [
          ['rate_limit_rule', 'tenant_id, route_id', 'r'],
          ['limit_override', 'limit_id, selector', 'tenant:z'],
        ] as const) {
          const statement = db.prepare(`INSERT INTO ${table} (${target}, policy, capacity, refill_per_second) VALUES (?, ?, ?, ?, ?)`);
          const insert = (policy: string, capacity: number | null, refill: number | null) => () => statement.run('z', `${second}${++n}`, policy, capacity, refill);
          // A policy no schema lists is taken (parseRule reports it on read: the contract tests).
          assert.doesNotThrow(insert('new_policy', null, null), table);
          assert.doesNotThrow(insert('new_bucket_2', 5, 1), table);
          assert.throws(insert('Token Bucket;', null, null), /CHECK/, table);
          assert.throws(insert('token-bucket', 5, 1), /CHECK/, table);
          assert.throws(insert('x'.repeat(65), null, null), /CHECK/, table);
          assert.throws(insert('token_bucket', 5, null), /CHECK/, `${table}: capacity without refill`);
          assert.throws(insert('gcra', null, 1), /CHECK/, `${table}: refill without capacity`);
        }
      } finally {
        db.close();
      }
    });
  }
});
