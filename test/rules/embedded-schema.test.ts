// A data dir made before the embedded store had migrations (the first schema,
// without the id and policy CHECKs) is brought up to date when a store opens it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';

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
      assert.throws(() => db.prepare("INSERT INTO rate_limit_rule (tenant_id, route_id, policy) VALUES ('shop-a', 'r', 'nope')").run(), /CHECK/);
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
      assert.equal(db.pragma('user_version', { simple: true }), 8);
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
