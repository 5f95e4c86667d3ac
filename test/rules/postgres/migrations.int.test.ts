// migrations/010 on a real PostgreSQL: a database at 009, whose rule tables list
// the policies in CHECKs, is brought to checks of form with every row kept, and
// afterwards the database takes any well-formed policy name (parseRule judges
// the name on every read: the store contracts) but still refuses a malformed
// one and a capacity without its refill rate.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { POLICY_REGISTRY } from '../../../src/policies/index.js';
import { loadMigrations, migrate } from '../../../src/rules/postgres/migrations.js';
import { PostgresRuleStore } from '../../../src/rules/postgres/store.js';
import { toColumns } from '../../../src/rules/rule-columns.js';
import { EVERY_POLICY, type StoredRuleInput } from '../every-policy.js';
import { createDatabase } from '../../helpers/postgres-db.js';
import { type PostgresHost, postgresForFile } from '../../helpers/shared-servers.js';


/** The CHECKs of 001 and 004 that list the policies, by the names PostgreSQL gave them. */
const NAMED_CHECKS = ['policy_check', 'check', 'check1'].flatMap((suffix) => [`rate_limit_rule_${suffix}`, `limit_override_${suffix}`]);

const RULE_TABLES = "('rate_limit_rule'::regclass, 'limit_override'::regclass)";

let server: PostgresHost;
let client: pg.Client;
let url: string;

const columnValues = (rule: StoredRuleInput): unknown[] => {
  const c = toColumns(rule);
  return [c.policy, c.capacity, c.refillPerSecond, c.params, c.shadow];
};
const byFirst = (a: unknown[], b: unknown[]): number => String(a[0]).localeCompare(String(b[0]));

/** The CHECK constraints of both rule tables: name → definition. */
async function ruleTableChecks(): Promise<Map<string, string>> {
  const { rows } = await client.query<{ conname: string; def: string }>(
    `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE contype = 'c' AND conrelid IN ${RULE_TABLES}`,
  );
  return new Map(rows.map((row) => [row.conname, row.def]));
}

before(async () => {
  server = await postgresForFile();
  url = await createDatabase(server);
  client = new pg.Client({ connectionString: url });
  await client.connect();
});
after(async () => {
  await client?.end();
  await server?.stop();
});

describe('migration 010: the rule tables check a policy by form, not by name', () => {
  it('brings a database at 009 over, keeping every row of every policy as it was', async () => {
    await migrate(client, loadMigrations().filter((migration) => migration.version <= 9));
    const before = await ruleTableChecks();
    for (const name of NAMED_CHECKS) assert.match(before.get(name) ?? '', /token_bucket/, `009 has ${name}, listing the policies`);
    for (const [name, rule] of EVERY_POLICY) {
      await client.query(
        `INSERT INTO rate_limit_rule (tenant_id, route_id, policy, capacity, refill_per_second, params, shadow, updated_at)
         VALUES ('shop-a', $1, $2, $3, $4, $5, $6, '2026-01-01T00:00:00Z')`,
        [name, ...columnValues(rule)],
      );
      await client.query(
        `INSERT INTO limit_override (limit_id, selector, policy, capacity, refill_per_second, params, shadow, updated_at)
         VALUES ('per-tenant', $1, $2, $3, $4, $5, $6, '2026-01-02T00:00:00Z')`,
        [`tenant:shop-${name}`, ...columnValues(rule)],
      );
    }

    const store = new PostgresRuleStore({ connectionString: url });
    try {
      assert.deepEqual(
        (await store.listRules()).map((r) => [r.route, r.rule, r.updatedAt]),
        EVERY_POLICY.map(([name, rule]) => [name, rule, '2026-01-01T00:00:00.000Z']).sort(byFirst),
      );
      assert.deepEqual(
        (await store.overrides.list()).map((o) => [o.selector, o.rule, o.updatedAt]),
        EVERY_POLICY.map(([name, rule]) => [`tenant:shop-${name}`, rule, '2026-01-02T00:00:00.000Z']).sort(byFirst),
      );
    } finally {
      await store.close();
    }
    const applied = await client.query<{ version: number }>('SELECT max(version) AS version FROM schema_migrations');
    assert.equal(applied.rows[0]?.version, 10);
    const checks = await ruleTableChecks();
    for (const name of NAMED_CHECKS) assert.equal(checks.has(name), false, `${name} dropped`);
    const named = [...checks].filter(([, def]) => Object.keys(POLICY_REGISTRY).some((policy) => def.includes(policy)));
    assert.deepEqual(named, [], 'no CHECK of a rule table names a policy');
  });

  it('then takes any well-formed policy name, and refuses a malformed one or a capacity without its refill', async () => {
    const takes = async (table: string, policy: string, capacity: number | null, refill: number | null): Promise<boolean> => {
      const target = table === 'rate_limit_rule' ? ['tenant_id, route_id', 'shop-z', 'r'] : ['limit_id, selector', 'l', 'tenant:z'];
      await client.query('BEGIN');
      try {
        await client.query(`INSERT INTO ${table} (${target[0]}, policy, capacity, refill_per_second) VALUES ($1, $2, $3, $4, $5)`, [target[1], target[2], policy, capacity, refill]);
        return true;
      } catch (error) {
        assert.equal((error as { code?: string }).code, '23514', `a CHECK refused it: ${String(error)}`);
        return false;
      } finally {
        await client.query('ROLLBACK');
      }
    };
    for (const table of ['rate_limit_rule', 'limit_override']) {
      assert.equal(await takes(table, 'new_policy', null, null), true, `${table}: a policy no schema lists`);
      assert.equal(await takes(table, 'new_bucket_2', 5, 1), true, `${table}: a new policy with bucket columns`);
      assert.equal(await takes(table, 'Token Bucket;', null, null), false, `${table}: a malformed name`);
      assert.equal(await takes(table, 'token-bucket', 5, 1), false, `${table}: a dash in the name`);
      assert.equal(await takes(table, 'x'.repeat(65), null, null), false, `${table}: a 65-character name`);
      assert.equal(await takes(table, 'token_bucket', 5, null), false, `${table}: capacity without refill`);
      assert.equal(await takes(table, 'gcra', null, 1), false, `${table}: refill without capacity`);
    }
  });
});
