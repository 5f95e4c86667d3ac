// The PostgreSQL schema (migrations/) and the embedded one (embedded/schema.ts)
// are written twice, in two dialects: the same rows go to both, and both must
// take or refuse each one alike, with the same columns. A CHECK added to one
// side only fails here.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { POLICIES } from '../../src/policies/rule.js';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { PostgresRuleStore } from '../../src/rules/postgres/store.js';
import { type PostgresHost, postgresForFile } from '../helpers/shared-servers.js';
import { createDatabase } from '../helpers/postgres-db.js';

type RuleCase = [name: string, ok: boolean, tenant: string, route: string, policy: string | null, capacity: unknown, refill: unknown, params: string, shadow?: boolean];

const BUCKET_POLICIES = ['token_bucket', 'gcra'];
const RULE_CASES: RuleCase[] = [
  ...POLICIES.map((policy): RuleCase => {
    const bucket = BUCKET_POLICIES.includes(policy);
    return [`a ${policy} rule`, true, 'shop-a', policy.replaceAll('_', '-'), policy, bucket ? 10 : null, bucket ? 0.5 : null, bucket ? '{}' : '{"limit": 5}'];
  }),
  ['any tenant, any route', true, '*', '*', 'token_bucket', 1, 1, '{}', true],
  ['every id character', true, 'a.b_c~d@e+f-9', 'R.o_u~t@e+-0', 'fixed_window', null, null, '{}'],
  ['a 64-character id', true, 't'.repeat(64), 'r', 'fixed_window', null, null, '{}'],
  ['a 65-character tenant', false, 't'.repeat(65), 'r', 'fixed_window', null, null, '{}'],
  ['an empty route', false, 'shop-a', '', 'fixed_window', null, null, '{}'],
  ['a space in a tenant', false, 'shop a', 'r', 'fixed_window', null, null, '{}'],
  ['a colon in a route', false, 'shop-a', 'r:1', 'fixed_window', null, null, '{}'],
  ['a brace in a tenant', false, '{shop}', 'r', 'fixed_window', null, null, '{}'],
  ['a star inside a route', false, 'shop-a', 'r*', 'fixed_window', null, null, '{}'],
  ['a non-ASCII tenant', false, 'shöp', 'r', 'fixed_window', null, null, '{}'],
  // The policy is checked for form, not against a list (migrations/010): parseRule judges the name on every read.
  ['a policy no schema lists', true, 'shop-a', 'r', 'new_policy', null, null, '{"limit": 5}'],
  ['a new policy with bucket columns', true, 'shop-a', 'r', 'new_bucket_2', 5, 1, '{}'],
  ['a 64-character policy', true, 'shop-a', 'r', 'p'.repeat(64), null, null, '{}'],
  ['a dash in a policy', false, 'shop-a', 'r', 'token-bucket', 1, 1, '{}'],
  ['a space and a semicolon in a policy', false, 'shop-a', 'r', 'Token Bucket;', null, null, '{}'],
  ['a capital in a policy', false, 'shop-a', 'r', 'Token_bucket', 1, 1, '{}'],
  ['a non-ASCII policy', false, 'shop-a', 'r', 'tokén', null, null, '{}'],
  ['a policy starting with a digit', false, 'shop-a', 'r', '9lives', null, null, '{}'],
  ['a policy starting with an underscore', false, 'shop-a', 'r', '_bucket', null, null, '{}'],
  ['a 65-character policy', false, 'shop-a', 'r', 'p'.repeat(65), null, null, '{}'],
  ['an empty policy', false, 'shop-a', 'r', '', null, null, '{}'],
  ['no policy', false, 'shop-a', 'r', null, null, null, '{}'],
  ['a zero capacity', false, 'shop-a', 'r', 'token_bucket', 0, 1, '{}'],
  ['a fractional capacity', false, 'shop-a', 'r', 'token_bucket', 1.5, 1, '{}'],
  ['a capacity past INT', false, 'shop-a', 'r', 'token_bucket', 3_000_000_000, 1, '{}'],
  ['a negative refill', false, 'shop-a', 'r', 'gcra', 1, -1, '{}'],
  ['a text refill', false, 'shop-a', 'r', 'gcra', 1, 'fast', '{}'],
  ['a bucket without refill', false, 'shop-a', 'r', 'token_bucket', 1, null, '{}'],
  ['a window with a capacity', false, 'shop-a', 'r', 'fixed_window', 5, null, '{}'],
  ['a window with a refill', false, 'shop-a', 'r', 'sliding_window_log', null, 1, '{}'],
  // Which policies keep capacity and refill in columns is rule-columns.ts's to say (and parseRule's to check).
  ['a window with a capacity and a refill', true, 'shop-a', 'r', 'fixed_window', 5, 1, '{}'],
  ['params as an array', false, 'shop-a', 'r', 'fixed_window', null, null, '[]'],
  ['params as a string', false, 'shop-a', 'r', 'fixed_window', null, null, '"x"'],
  ['params not JSON', false, 'shop-a', 'r', 'fixed_window', null, null, '{limit: 5'],
];

type KeyCase = [name: string, ok: boolean, id: string, hashBytes: number, tenant: string];
const KEY_CASES: KeyCase[] = [
  ['a key', true, 'key_AbC-09', 32, 'shop-a'],
  ['a 31-byte hash', false, 'key_1', 31, 'shop-a'],
  ['a dot in an id', false, 'key.1', 32, 'shop-a'],
  ['a 65-character id', false, 'k'.repeat(65), 32, 'shop-a'],
  ['any tenant', false, 'key_1', 32, '*'],
  ['a colon in a tenant', false, 'key_1', 32, 'shop:a'],
];

type OverrideCase = [name: string, ok: boolean, limitId: string, selector: string, policy: string, capacity: unknown, refill: unknown, params: string];
const OVERRIDE_CASES: OverrideCase[] = [
  ['a tenant override', true, 'per-tenant', 'tenant:shop-a', 'token_bucket', 10, 1, '{}'],
  ['an IPv4 CIDR', true, 'login-per-ip', 'ip:203.0.113.0/24', 'leaky_bucket', null, null, '{"ratePerSecond": 1, "burst": 5}'],
  ['an IPv6 CIDR', true, 'login-per-ip', 'ip:2001:db8::/48', 'fixed_window', null, null, '{"limit": 5, "windowMs": 1000}'],
  ['a header hash', true, 'per-user', `header:~h.${'a'.repeat(32)}`, 'gcra', 5, 2, '{}'],
  ['a 128-character selector', true, 'l', `tenant:${'t'.repeat(121)}`, 'gcra', 5, 2, '{}'],
  ['a 129-character selector', false, 'l', `tenant:${'t'.repeat(122)}`, 'gcra', 5, 2, '{}'],
  ['an unknown selector kind', false, 'l', 'cookie:x', 'gcra', 5, 2, '{}'],
  ['an empty selector value', false, 'l', 'ip:', 'gcra', 5, 2, '{}'],
  ['a space in a selector', false, 'l', 'tenant:a b', 'gcra', 5, 2, '{}'],
  ['a newline in a selector', false, 'l', 'tenant:a\nb', 'gcra', 5, 2, '{}'],
  ['a colon in a limit id', false, 'l:1', 'tenant:a', 'gcra', 5, 2, '{}'],
  ['any limit', false, '*', 'tenant:a', 'gcra', 5, 2, '{}'],
  ['a 65-character limit id', false, 'l'.repeat(65), 'tenant:a', 'gcra', 5, 2, '{}'],
  ['a policy no schema lists', true, 'l', 'tenant:a', 'bucket', 5, 2, '{}'],
  ['a malformed policy', false, 'l', 'tenant:a', 'Bucket!', 5, 2, '{}'],
  ['a window with a capacity', false, 'l', 'tenant:a', 'fixed_window', 5, null, '{}'],
  ['a bucket without refill', false, 'l', 'tenant:a', 'token_bucket', 5, null, '{}'],
  ['params as an array', false, 'l', 'tenant:a', 'fixed_window', null, null, '[]'],
];

const OVERRIDE_INSERT = 'INSERT INTO limit_override (limit_id, selector, policy, capacity, refill_per_second, params, shadow)';
const RULE_INSERT = 'INSERT INTO rate_limit_rule (tenant_id, route_id, policy, capacity, refill_per_second, params, shadow)';
const KEY_INSERT = 'INSERT INTO api_key (id, key_hash, tenant_id)';

let server: PostgresHost;
let pgClient: pg.Client;
let sqlite: Database.Database;
let dataDir: string;

/** Whether the statement is taken; always rolled back, so every case starts from empty tables. */
async function takesPg(text: string, values: unknown[]): Promise<boolean> {
  await pgClient.query('BEGIN');
  try {
    await pgClient.query(text, values);
    return true;
  } catch {
    return false;
  } finally {
    await pgClient.query('ROLLBACK');
  }
}

function takesSqlite(text: string, values: unknown[]): boolean {
  sqlite.exec('BEGIN');
  try {
    sqlite.prepare(text).run(...values);
    return true;
  } catch {
    return false;
  } finally {
    sqlite.exec('ROLLBACK');
  }
}

before(async () => {
  server = await postgresForFile();
  const url = await createDatabase(server);
  const store = new PostgresRuleStore({ connectionString: url });
  await store.listRules(); // migrates
  await store.close();
  pgClient = new pg.Client({ connectionString: url });
  await pgClient.connect();
  dataDir = mkdtempSync(join(tmpdir(), 'sluice-parity-'));
  await new EmbeddedRuleStore({ dataDir }).close(); // migrates
  sqlite = new Database(join(dataDir, 'rules.sqlite'));
});
after(async () => {
  sqlite?.close();
  await pgClient?.end();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('the PostgreSQL and embedded schemas', () => {
  it('have the same columns, in the same order', async () => {
    for (const table of ['rate_limit_rule', 'api_key', 'sluice_meta', 'limit_override', 'admin_token', 'audit_log', 'plan', 'plan_limit', 'plan_assignment', 'list_entry']) {
      const inPg = await pgClient.query<{ column_name: string }>(
        'SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position',
        [table],
      );
      const inSqlite = sqlite.pragma(`table_info(${table})`) as { name: string }[];
      assert.deepEqual(inSqlite.map((c) => c.name), inPg.rows.map((r) => r.column_name), table);
    }
  });

  it('take or refuse the same rule rows', async () => {
    for (const [name, ok, tenant, route, policy, capacity, refill, params, shadow = false] of RULE_CASES) {
      const values = [tenant, route, policy, capacity, refill];
      const inPg = await takesPg(`${RULE_INSERT} VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`, [...values, params, shadow]);
      const inSqlite = takesSqlite(`${RULE_INSERT} VALUES (?, ?, ?, ?, ?, ?, ?)`, [...values, params, shadow ? 1 : 0]);
      assert.deepEqual({ name, pg: inPg, sqlite: inSqlite }, { name, pg: ok, sqlite: ok });
    }
  });

  it('take or refuse the same override rows', async () => {
    for (const [name, ok, limitId, selector, policy, capacity, refill, params] of OVERRIDE_CASES) {
      const values = [limitId, selector, policy, capacity, refill];
      const inPg = await takesPg(`${OVERRIDE_INSERT} VALUES ($1, $2, $3, $4, $5, $6::jsonb, false)`, [...values, params]);
      const inSqlite = takesSqlite(`${OVERRIDE_INSERT} VALUES (?, ?, ?, ?, ?, ?, 0)`, [...values, params]);
      assert.deepEqual({ name, pg: inPg, sqlite: inSqlite }, { name, pg: ok, sqlite: ok });
    }
  });

  it('take or refuse the same key rows', async () => {
    for (const [name, ok, id, hashBytes, tenant] of KEY_CASES) {
      const values = [id, Buffer.alloc(hashBytes, 7), tenant];
      const inPg = await takesPg(`${KEY_INSERT} VALUES ($1, $2, $3)`, values);
      const inSqlite = takesSqlite(`${KEY_INSERT} VALUES (?, ?, ?)`, values);
      assert.deepEqual({ name, pg: inPg, sqlite: inSqlite }, { name, pg: ok, sqlite: ok });
    }
  });

  it('take or refuse the same plan rows', async () => {
    await pgClient.query("INSERT INTO plan (name) VALUES ('p')");
    sqlite.prepare("INSERT INTO plan (name) VALUES ('p')").run();
    const rule = '{"policy":"gcra","capacity":2,"refillPerSecond":1}';
    const cases: [string, boolean, string, string, string][] = [
      ['a global limit', true, 'global', '*', rule],
      ['a route limit', true, 'route', 'orders', rule],
      ['a limit-id limit', true, 'limit', 'a.b_c~d@e+f-9', rule],
      ['a global limit with a target', false, 'global', 'orders', rule],
      ['a route limit for *', false, 'route', '*', rule],
      ['an unknown scope', false, 'tier', 'orders', rule],
      ['a colon in a target', false, 'route', 'r:1', rule],
      ['a 65-character target', false, 'route', 'r'.repeat(65), rule],
      ['a rule that is no object', false, 'route', 'orders', '[1]'],
    ];
    for (const [name, ok, scope, target, json] of cases) {
      const inPg = await takesPg('INSERT INTO plan_limit (plan_name, scope, target, rule) VALUES ($1, $2, $3, $4::jsonb)', ['p', scope, target, json]);
      const inSqlite = takesSqlite('INSERT INTO plan_limit (plan_name, scope, target, rule) VALUES (?, ?, ?, ?)', ['p', scope, target, json]);
      assert.deepEqual({ name, pg: inPg, sqlite: inSqlite }, { name, pg: ok, sqlite: ok });
    }
    for (const [name, ok, subject, id] of [['a tenant', true, 'tenant', 'shop-a'], ['a key', true, 'key', 'k_1'], ['a group', false, 'group', 'x'], ['a brace', false, 'tenant', '{x}']] as const) {
      const inPg = await takesPg('INSERT INTO plan_assignment (subject, subject_id, plan_name) VALUES ($1, $2, $3)', [subject, id, 'p']);
      const inSqlite = takesSqlite('INSERT INTO plan_assignment (subject, subject_id, plan_name) VALUES (?, ?, ?)', [subject, id, 'p']);
      assert.deepEqual({ name, pg: inPg, sqlite: inSqlite }, { name, pg: ok, sqlite: ok });
    }
    const bad = "INSERT INTO plan (name) VALUES ('a b')";
    assert.deepEqual([await takesPg(bad, []), takesSqlite(bad, [])], [false, false]);
  });
  it('take or refuse the same list entry rows', async () => {
    const sql = (n: (i: number) => string) =>
      `INSERT INTO list_entry (id, action, match_kind, match_name, match_value, routes, limit_id, expires_at, note) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8, 9].map(n).join(', ')})`;
    const hash = 'a'.repeat(43);
    const cases: [string, boolean, (string | null)[]][] = [
      ['a network deny', true, ['e1', 'deny', 'cidr', null, '203.0.113.0/24', null, null, null, 'scanner']],
      ['a tenant allow on two routes', true, ['e2', 'allow', 'tenant', null, 'partner', '["orders","search"]', null, '2027-01-31T00:00:00.000Z', null]],
      ['a header entry', true, ['e3', 'deny', 'header', 'user-agent', hash, null, null, null, null]],
      ['a limit-scoped allow', true, ['e4', 'allow', 'claim', 'sub', hash, null, 'per-ip', null, null]],
      ['a limit on a deny', false, ['e5', 'deny', 'cidr', null, '10.0.0.0/8', null, 'per-ip', null, null]],
      ['a header entry with no name', false, ['e6', 'deny', 'header', null, hash, null, null, null, null]],
      ['a network with a name', false, ['e7', 'deny', 'cidr', 'x', '10.0.0.0/8', null, null, null, null]],
      ['an unknown action', false, ['e8', 'block', 'cidr', null, '10.0.0.0/8', null, null, null, null]],
      ['an unknown match', false, ['e9', 'deny', 'country', null, 'NL', null, null, null, null]],
      ['a tenant with a brace', false, ['e10', 'deny', 'tenant', null, '{x}', null, null, null, null]],
      ['routes that are no list', false, ['e11', 'deny', 'cidr', null, '10.0.0.0/8', '{"a":1}', null, null, null]],
      ['an empty routes list', false, ['e12', 'deny', 'cidr', null, '10.0.0.0/8', '[]', null, null, null]],
      ['an id with a colon', false, ['e:13', 'deny', 'cidr', null, '10.0.0.0/8', null, null, null, null]],
      ['a 501-character note', false, ['e14', 'deny', 'cidr', null, '10.0.0.0/8', null, null, null, 'n'.repeat(501)]],
    ];
    for (const [name, ok, values] of cases) {
      const inPg = await takesPg(sql((i) => (i === 6 ? `$${i}::jsonb` : i === 8 ? `$${i}::timestamptz` : `$${i}`)), values);
      const inSqlite = takesSqlite(sql(() => '?'), values);
      assert.deepEqual({ name, pg: inPg, sqlite: inSqlite }, { name, pg: ok, sqlite: ok });
    }
  });
});
